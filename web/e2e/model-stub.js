// A scripted model for the end-to-end tests: an OpenAI-compatible `POST /v1/chat/completions`
// on loopback that streams the replies the test queued, in order, and records each request.
// A case scripts its own session's replies under a marker that its first message carries
// (`script(marker, ...)`): a request whose operator messages hold the marker takes the next of those, so
// cases never take one another's replies. `queue` is for requests without a marker.
import http from 'node:http';

/**
 * @typedef {{ name: string, arguments: object }} StubCall
 * @typedef {{ text?: string, chunks?: number, chunkDelayMs?: number, calls?: StubCall[], status?: number, body?: string }} StubReply
 */

/** Starts the stub; `queue(...replies)` adds replies, `requests` lists what the agent sent. */
export async function startModelStub() {
  /** @type {StubReply[]} */
  const replies = [];
  /** @type {Map<string, StubReply[]>} */
  const scripts = new Map();
  /** @type {object[]} */
  const requests = [];
  let callCounter = 0;

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      /** @type {any} */
      let request;
      try {
        request = JSON.parse(body);
      } catch {
        request = { unparsed: body };
      }
      requests.push(request);
      // Only the operator's side of the conversation names the case: the system prompt and
      // tool results can quote other cases' knowledge.
      const asked = (Array.isArray(request.messages) ? request.messages : [])
        .filter((/** @type {any} */ m) => m.role === 'user')
        .map((/** @type {any} */ m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
        .join('\n');
      const own = [...scripts.entries()].find(([marker]) => asked.includes(marker));
      const reply = (own ? own[1].shift() : replies.shift()) ?? { text: 'The script has no more replies.' };
      if (reply.status) {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(reply.body ?? JSON.stringify({ error: { message: 'scripted failure' } }));
        return;
      }
      void stream(res, reply);
    });
  });

  /** @param {http.ServerResponse} res @param {StubReply} reply */
  async function stream(res, reply) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    /** @param {object} delta @param {string | null} [finish] */
    const send = (delta, finish = null) =>
      res.write(`data: ${JSON.stringify({ id: 'stub', object: 'chat.completion.chunk', model: 'stub-e2e', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    const text = reply.text ?? '';
    if (text) {
      const n = Math.max(1, Math.min(reply.chunks ?? 1, text.length));
      const size = Math.ceil(text.length / n);
      for (let at = 0; at < text.length; at += size) {
        send({ role: 'assistant', content: text.slice(at, at + size) });
        if (reply.chunkDelayMs) await new Promise((r) => setTimeout(r, reply.chunkDelayMs));
      }
    }
    (reply.calls ?? []).forEach((call, index) => {
      callCounter += 1;
      send({
        tool_calls: [{ index, id: `call_${callCounter}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }],
      });
    });
    send({}, (reply.calls ?? []).length > 0 ? 'tool_calls' : 'stop');
    res.write('data: [DONE]\n\n');
    res.end();
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    requests,
    /** @param {StubReply[]} more */
    queue: (...more) => replies.push(...more),
    remaining: () => replies.length,
    /** Replies for the session whose messages carry `marker`. @param {string} marker @param {StubReply[]} more */
    script: (marker, ...more) => scripts.set(marker, [...(scripts.get(marker) ?? []), ...more]),
    /** @param {string} marker */
    left: (marker) => scripts.get(marker)?.length ?? 0,
    /** Requests that carried `marker`. @param {string} marker */
    asked: (marker) => requests.filter((r) => JSON.stringify(r).includes(marker)).length,
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}
