// Preloaded into Node test peers (node --require): every server they start
// listens on 127.0.0.1 only, whatever host it asked for, and the port it got
// is announced on stderr as "MCPI_LISTENING <port>" so that tests can use
// PORT=0 without guessing a free port.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once('listening', () => {
    const a = this.address();
    if (a && typeof a === 'object') process.stderr.write(`MCPI_LISTENING ${a.port}\n`);
  });
  if (args.length > 0 && args[0] !== null && typeof args[0] === 'object') {
    args[0] = Object.assign({}, args[0], { host: '127.0.0.1' });
    return listen.apply(this, args);
  }
  const callbacks = args.filter((a) => typeof a === 'function');
  const port = typeof args[0] === 'function' ? 0 : args[0];
  return listen.call(this, port, '127.0.0.1', ...callbacks);
};
