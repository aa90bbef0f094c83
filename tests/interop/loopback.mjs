// Preloaded into the third-party example servers (`node --import ./loopback.mjs …`): they listen on every
// interface (`app.listen(port)`), and the tests must open nothing but loopback. A listen() that names
// no host binds 127.0.0.1 instead; one that names a host is left alone.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && args[0].host === undefined) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
