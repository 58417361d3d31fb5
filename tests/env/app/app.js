// The stand-in Coffee Manage app (the lab's is a Node.js app on mysql2 too): it reads only the
// four APP_DB_* variables the connection Secret gives through envFrom, makes sure the suppliers
// table exists, inserts a supplier, reads the suppliers back and prints them as one JSON line,
// then stays up as the app does (APP_ONCE set: exits). With APP_DB_CA (the Secret's CA bundle,
// `{{ caBundle }}`) it connects with TLS and verifies the server's certificate and name against
// it, and says which TLS version it got.
//
// A user with IAM authentication (docs/dbuser.md): APP_DB_PASSWORD_FILE names the Secret's key
// mounted as a file, read again at each connection (the kubelet updates a mounted Secret, never an
// environment variable), and the token goes as the server asks for it, in clear (mysql2's
// mysql_clear_password, as RDS's examples pass --enable-cleartext-plugin). With APP_EVERY (seconds)
// the app connects again every so often, inserting a supplier each time; any failure ends it.
// Asked to stop (SIGTERM, as Kubernetes asks a Pod it rolls away), it finishes the connection it
// is making first, as a production app drains its work, and never leaves a login half made.
const fs = require("fs");
const mysql = require("mysql2/promise");

function password() {
  const file = process.env.APP_DB_PASSWORD_FILE;
  return file ? fs.readFileSync(file, "utf8") : process.env.APP_DB_PASSWORD;
}

async function once(cycle) {
  const secret = password();
  const connection = await mysql.createConnection({
    host: process.env.APP_DB_HOST,
    user: process.env.APP_DB_USER,
    password: secret,
    database: process.env.APP_DB_NAME,
    authPlugins: { mysql_clear_password: () => () => Buffer.from(`${secret}\0`) },
    ...(process.env.APP_DB_CA ? { ssl: { ca: process.env.APP_DB_CA, rejectUnauthorized: true } } : {}),
  });
  try {
    await connection.query(
      "CREATE TABLE IF NOT EXISTS suppliers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255) NOT NULL)"
    );
    const name = (process.env.HOSTNAME || "coffee") + (cycle > 0 ? `-${cycle}` : "");
    await connection.query("INSERT INTO suppliers (name) VALUES (?)", [name]);
    const [rows] = await connection.query("SELECT name FROM suppliers ORDER BY id");
    const [tls] = await connection.query("SHOW SESSION STATUS LIKE 'Ssl_version'");
    console.log(JSON.stringify({ suppliers: rows.map((r) => r.name), tls: tls[0] ? tls[0].Value : "" }));
  } finally {
    await connection.end();
  }
}

let busy = false;
let stopping = false;
process.on("SIGTERM", () => {
  stopping = true;
  if (!busy) process.exit(0);
});

async function cycle(n) {
  busy = true;
  await once(n);
  busy = false;
  if (stopping) process.exit(0);
}

async function main() {
  const every = Number(process.env.APP_EVERY || 0);
  await cycle(0);
  for (let n = 1; every > 0; n++) {
    await new Promise((resolve) => setTimeout(resolve, every * 1000));
    await cycle(n);
  }
}

main().then(
  () => (process.env.APP_ONCE ? process.exit(0) : setInterval(() => {}, 1 << 30)),
  (e) => {
    console.error(`coffee-manage: ${e.message}`);
    process.exit(1);
  }
);
