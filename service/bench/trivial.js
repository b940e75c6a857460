'use strict';
// The framework's floor for bench.js: the same fastify setup and body
// schema as the service's single-ID endpoint, answering a constant ID with
// no buffer and no database.  usage: node trivial.js PORT
const fastify = require('fastify');

const app = fastify({ logger: false, bodyLimit: 64 * 1024 });
app.post('/api/snowflake/v1/gen/', {
  schema: {
    body: {
      type: 'object', required: ['namespace'],
      properties: { namespace: { type: 'integer', minimum: 0 } },
    },
  },
}, async () => ({ message: 'success', code: 0, data: { snowflake_id: '107209837483659272', datacenter_id: 1 } }));
app.listen({ host: '127.0.0.1', port: Number(process.argv[2]) }).catch((e) => {
  console.error(e);
  process.exit(1);
});
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
