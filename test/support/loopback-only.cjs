/**
 * Preloaded (`node --require`) into the example apps the README tests run
 * with the official SDKs: every socket may connect to this machine only. The
 * SDKs' dev mode downloads a server of its own when it finds none on
 * 127.0.0.1; a test must fail rather than reach the internet.
 */
const net = require("node:net");

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|localhost)$/;
const connect = net.Socket.prototype.connect;

net.Socket.prototype.connect = function guardedConnect(...args) {
  const options = typeof args[0] === "object" && args[0] !== null ? (Array.isArray(args[0]) ? args[0][0] : args[0]) : { port: args[0], host: args[1] };
  const host = options.path === undefined ? (options.host ?? "localhost") : "localhost";
  if (!LOOPBACK.test(host)) throw new Error(`loopback-only: refused a connection to ${host} (tests reach 127.0.0.0/8 and ::1 only)`);
  return connect.apply(this, args);
};
