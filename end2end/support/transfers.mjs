// What the browser downloads, as chromium's DevTools protocol reports it: for each
// request, the bytes that crossed the network (headers and the encoded body) and
// whether a cache answered instead. Used by tests (a repeat visit downloads nothing
// again) and by `bench bundle` (first-visit bytes).
export async function recordTransfers(context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let requests = new Map();
  const entry = (requestId) => {
    if (!requests.has(requestId)) requests.set(requestId, { url: '', bytes: 0, cached: false, encoding: null, status: 0 });
    return requests.get(requestId);
  };
  cdp.on('Network.requestWillBeSent', ({ requestId, request }) => { entry(requestId).url = request.url; });
  cdp.on('Network.requestServedFromCache', ({ requestId }) => { entry(requestId).cached = true; });
  cdp.on('Network.responseReceived', ({ requestId, response }) => {
    const request = entry(requestId);
    request.url = response.url;
    request.status = response.status;
    request.cached ||= Boolean(response.fromDiskCache || response.fromPrefetchCache);
    const header = Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'content-encoding');
    request.encoding = header ? header[1] : null;
  });
  cdp.on('Network.loadingFinished', ({ requestId, encodedDataLength }) => {
    entry(requestId).bytes = encodedDataLength;
  });
  return {
    /** Every request so far. */
    all: () => [...requests.values()],
    /** The scripts: every `.wasm` and `.js` request so far. */
    scripts: () => [...requests.values()].filter(({ url }) => /\.(wasm|js)$/.test(new URL(url).pathname)),
    /** Bytes the network carried for `list` (cache answers carry none). */
    bytes: (list) => list.filter(({ cached }) => !cached).reduce((sum, { bytes }) => sum + bytes, 0),
    reset() { requests = new Map(); },
  };
}
