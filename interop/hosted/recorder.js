// Minimal recording HTTP server: stores every request (method, path, raw headers,
// parsed JSON body) and answers from a route table. No dependencies.
'use strict';
const http = require('node:http');

function startRecorder(routes) {
  const recorded = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      // headers: lower-cased names (HTTP semantics); rawHeaderNames: the case and
      // order the client put on the wire.
      const headers = {};
      const rawHeaderNames = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        rawHeaderNames.push(req.rawHeaders[i]);
        headers[req.rawHeaders[i].toLowerCase()] = req.rawHeaders[i + 1];
      }
      // The port changes every run; keep fixtures stable.
      if (headers.host) headers.host = headers.host.replace(/:\d+$/, ':PORT');
      let body = null;
      if (raw.length) {
        try { body = JSON.parse(raw); } catch { body = raw; }
      }
      const entry = { method: req.method, path: req.url, headers, rawHeaderNames, body, rawBody: raw };
      recorded.push(entry);
      const route = routes.find((r) => r.method === req.method && r.match.test(req.url));
      if (!route) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'no route', type: 'not_found' } }));
        return;
      }
      const out = route.reply(entry, recorded);
      res.writeHead(out.status, { 'content-type': 'application/json', ...(out.headers || {}) });
      res.end(out.body === undefined ? '' : JSON.stringify(out.body));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({ port: server.address().port, recorded, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

module.exports = { startRecorder };
