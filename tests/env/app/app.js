// The stand-in Coffee Manage app (the lab's is a Node.js app on mysql2 too): it reads only the
// four APP_DB_* variables the connection Secret gives through envFrom, makes sure the suppliers
// table exists, inserts a supplier, reads the suppliers back and prints them as one JSON line,
// then stays up as the app does.
const mysql = require("mysql2/promise");

async function main() {
  const connection = await mysql.createConnection({
    host: process.env.APP_DB_HOST,
    user: process.env.APP_DB_USER,
    password: process.env.APP_DB_PASSWORD,
    database: process.env.APP_DB_NAME,
  });
  try {
    await connection.query(
      "CREATE TABLE IF NOT EXISTS suppliers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255) NOT NULL)"
    );
    const name = process.env.HOSTNAME || "coffee";
    await connection.query("INSERT INTO suppliers (name) VALUES (?)", [name]);
    const [rows] = await connection.query("SELECT name FROM suppliers ORDER BY id");
    console.log(JSON.stringify({ suppliers: rows.map((r) => r.name) }));
  } finally {
    await connection.end();
  }
}

main().then(
  () => setInterval(() => {}, 1 << 30),
  (e) => {
    console.error(`coffee-manage: ${e.message}`);
    process.exit(1);
  }
);
