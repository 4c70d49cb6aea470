import { test } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import { openSse } from '../../backend/api/sseWriter';
import { listen } from '../../backend/api/server';

test('openSse streams named JSON events and notices the client leaving', async () => {
  const app = express();
  let aborted: Promise<void> | undefined;
  app.get('/events', (req, res) => {
    const stream = openSse(req, res, 20);
    aborted = new Promise((r) => stream.signal.addEventListener('abort', () => r()));
    stream.send('progress', { n: 1, text: 'a\nb' }, 1);
    stream.comment('hello');
    stream.send('done', { ok: true });
  });
  const http = await listen(app, '127.0.0.1', 0, undefined);
  try {
    const controller = new AbortController();
    const res = await fetch(`${http.url}/events`, { signal: controller.signal });
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: done')) text += new TextDecoder().decode((await reader.read()).value);
    assert.match(text, /id: 1\nevent: progress\ndata: \{"n":1,"text":"a\\nb"\}\n\n/);
    assert.match(text, /: hello\n\n/);
    controller.abort();
    await aborted;
  } finally {
    await http.close();
  }
});
