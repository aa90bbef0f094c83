// Preloaded (node --require) into the third-party servers the interop tests start: they listen on every
// interface (app.listen(PORT)), and the tests must only ever use loopback. A listen() given no host gets
// 127.0.0.1; one given a host keeps it.
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || typeof args[0] === "string") && /^\d+$/.test(String(args[0]))) {
    if (args.length === 1 || typeof args[1] === "function") args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && !args[0].host && !args[0].path) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
