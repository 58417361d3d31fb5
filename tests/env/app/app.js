// The stand-in Coffee Manage app (the lab's is a Node.js app on mysql2 too): it reads only the
// four APP_DB_* variables the connection Secret gives through envFrom, makes sure the suppliers
// table exists, inserts a supplier, reads the suppliers back and prints them as one JSON line,
// then stays up as the app does (APP_ONCE set: exits). With APP_DB_CA (the Secret's CA bundle,
// `{{ caBundle }}`) it connects with TLS and verifies the server's certificate and name against
// it, and says which TLS version it got.
const mysql = require("mysql2/promise");

async function main() {
  const connection = await mysql.createConnection({
    host: process.env.APP_DB_HOST,
    user: process.env.APP_DB_USER,
    password: process.env.APP_DB_PASSWORD,
    database: process.env.APP_DB_NAME,
    ...(process.env.APP_DB_CA ? { ssl: { ca: process.env.APP_DB_CA, rejectUnauthorized: true } } : {}),
  });
  try {
    await connection.query(
      "CREATE TABLE IF NOT EXISTS suppliers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255) NOT NULL)"
    );
    const name = process.env.HOSTNAME || "coffee";
    await connection.query("INSERT INTO suppliers (name) VALUES (?)", [name]);
    const [rows] = await connection.query("SELECT name FROM suppliers ORDER BY id");
    const [tls] = await connection.query("SHOW SESSION STATUS LIKE 'Ssl_version'");
    console.log(JSON.stringify({ suppliers: rows.map((r) => r.name), tls: tls[0] ? tls[0].Value : "" }));
  } finally {
    await connection.end();
  }
}

main().then(
  () => (process.env.APP_ONCE ? process.exit(0) : setInterval(() => {}, 1 << 30)),
  (e) => {
    console.error(`coffee-manage: ${e.message}`);
    process.exit(1);
  }
);
