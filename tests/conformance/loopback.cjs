// Keep every TCP server of a Node process on 127.0.0.1.
//
//   NODE_OPTIONS="--require tests/conformance/loopback.cjs" npx conformance ...
//
// The conformance suite's mock servers (and server-everything in Streamable HTTP mode) call
// listen(port) with no host, which in Node means every interface. This preload rewrites each
// net.Server#listen call that names no host, or another host, so that it binds the loopback
// address; unix sockets, file descriptors and handles pass through untouched.
//
// One subtlety: listen(port, host) resolves `host` with dns.lookup, which answers on a later
// tick even for an IP literal, so server.address() would still be null right after listen()
// returns. Several of the suite's auth scenarios read address().port at once. While one of our
// rewritten listen() calls is on the stack, a lookup of the loopback literal is therefore
// answered synchronously.
//
// Set MCPLAB_LOOPBACK_REPORT=1 to have each server print "loopback: listening on 127.0.0.1:PORT"
// on stderr once it listens (a test reads the port from there when the program prints none).
'use strict';

const dns = require('dns');
const net = require('net');

const LOOPBACK = '127.0.0.1';
const realListen = net.Server.prototype.listen;
const realLookup = dns.lookup;
let rewriting = 0; // depth of our own listen() calls on the stack

dns.lookup = function lookup(hostname, options, callback) {
  if (rewriting === 0 || hostname !== LOOPBACK) {
    return realLookup.apply(this, arguments);
  }
  const done = typeof options === 'function' ? options : callback;
  const wantsAll = options !== null && typeof options === 'object' && options.all === true;
  if (wantsAll) {
    done(null, [{ address: LOOPBACK, family: 4 }]);
  } else {
    done(null, LOOPBACK, 4);
  }
  return {};
};

function isPortNumber(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^[0-9]+$/.test(value));
}

function onLoopback(args) {
  const first = args[0];
  if (first === undefined || first === null || typeof first === 'function') {
    // listen() or listen(callback): port 0 on all interfaces, unless we say otherwise.
    const rest = args.slice(1).filter((arg) => arg !== undefined);
    return typeof first === 'function' ? [0, LOOPBACK, ...rest, first] : [0, LOOPBACK, ...rest];
  }
  if (isPortNumber(first)) {
    // listen(port[, host][, backlog][, callback])
    const copy = args.slice();
    if (typeof copy[1] === 'string') {
      copy[1] = LOOPBACK;
    } else {
      copy.splice(1, 0, LOOPBACK);
    }
    return copy;
  }
  const isOptions = typeof first === 'object' && !Array.isArray(first);
  const isEndpoint = isOptions && (first.path !== undefined || first.fd !== undefined ||
                                   first.handle !== undefined || first._handle !== undefined);
  if (isOptions && !isEndpoint) {
    return [{ ...first, host: LOOPBACK }, ...args.slice(1)];
  }
  return args; // a unix socket path, a handle or a file descriptor: not TCP, leave it alone
}

net.Server.prototype.listen = function listen(...args) {
  if (process.env.MCPLAB_LOOPBACK_REPORT) {
    this.once('listening', () => {
      const address = this.address();
      if (address && typeof address === 'object') {
        process.stderr.write(`loopback: listening on ${address.address}:${address.port}\n`);
      }
    });
  }
  rewriting += 1;
  try {
    return realListen.apply(this, onLoopback(args));
  } finally {
    rewriting -= 1;
  }
};
