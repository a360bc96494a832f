// PostGraphile's own Node HTTP server (grafserv's node adaptor) on a free loopback port. It
// builds the schema first, then announces its address with the JSON log line creditd serve
// writes, {"msg":"listening","addr":"host:port"}, which the harness waits for.
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { grafserv } from "postgraphile/grafserv/node";
import preset from "./graphile.config.mjs";

const pgl = postgraphile(preset);
await pgl.getSchema();
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on("error", (e) => {
  console.error(e);
  process.exit(1);
});
await serv.addTo(server);
server.listen(0, "127.0.0.1", () => {
  const { address, port } = server.address();
  console.log(JSON.stringify({ msg: "listening", addr: `${address}:${port}` }));
});
process.on("SIGTERM", () => {
  server.close();
  pgl.release().finally(() => process.exit(0));
});
