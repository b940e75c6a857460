'use strict';
// The framework's floor for bench.js: the same fastify setup, body parser
// and strict body schema as the service's single-ID endpoint, answering a
// constant: the text of an answer with one ID (as a number and a string,
// written as the service writes them), made once at start, with no buffer,
// no database and no work per request.  usage: node trivial.js PORT
const fastify = require('fastify');
const { parseJson, withIds, STRICT_AJV } = require('../server');

const ID = '107209837483659272';
const ANSWER = withIds({
  message: 'success', code: 0,
  data: { snowflake_id: '@snowflake_id@', snowflake_id_str: ID, datacenter_id: 1 },
}, { snowflake_id: ID });

const app = fastify({ logger: false, bodyLimit: 64 * 1024, ajv: STRICT_AJV });
app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
  try {
    done(null, parseJson(body));
  } catch (e) {
    e.statusCode = 400;
    done(e);
  }
});
app.post('/api/snowflake/v1/gen/', {
  schema: {
    body: {
      type: 'object', required: ['namespace'], additionalProperties: false,
      properties: { namespace: { type: 'integer', minimum: 0, maximum: 9999999999 } },
    },
  },
}, async (req, reply) => {
  reply.type('application/json; charset=utf-8');
  return ANSWER;
});
app.listen({ host: '127.0.0.1', port: Number(process.argv[2]) }).catch((e) => {
  console.error(e);
  process.exit(1);
});
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
