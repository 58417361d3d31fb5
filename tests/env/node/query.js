// Runs one SQL statement with mysql2 (the Coffee Manage app's driver) on a connection URI, and
// prints the rows as JSON: node query.js "mysql://user:pass@host:port/db" "SELECT 1"
const mysql = require("mysql2/promise");

(async () => {
  const [uri, sql] = process.argv.slice(2);
  const connection = await mysql.createConnection(uri);
  try {
    const [rows] = await connection.query(sql);
    console.log(JSON.stringify(rows));
  } finally {
    await connection.end();
  }
})().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
