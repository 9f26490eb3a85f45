// A small client of Corral's JSON API for test setup: sign in with a password
// (session cookie + CSRF token) and call endpoints, failing loudly on errors.
export class Api {
  constructor(baseUrl) {
    this.base = baseUrl.replace(/\/$/, '');
    this.cookie = null;
    this.csrf = null;
  }

  static async signIn(baseUrl, username, password) {
    const api = new Api(baseUrl);
    const response = await fetch(`${api.base}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    if (!response.ok) throw new Error(`sign-in as ${username} failed: ${response.status} ${await response.text()}`);
    api.cookie = response.headers.get('set-cookie').split(';')[0];
    api.csrf = (await response.json()).csrf_token;
    return api;
  }

  async call(method, path, body, contentType = 'application/json') {
    const headers = { cookie: this.cookie, 'x-csrf-token': this.csrf };
    let payload;
    if (body !== undefined) {
      headers['content-type'] = contentType;
      payload = contentType === 'application/json' ? JSON.stringify(body) : body;
    }
    const response = await fetch(`${this.base}${path}`, { method, headers, body: payload });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }

  get(path) { return this.call('GET', path); }

  /** Signs `context` (a browser context) in as this client's user: its session cookie. */
  async signInBrowser(context) {
    const split = this.cookie.indexOf('=');
    await context.addCookies([
      { name: this.cookie.slice(0, split), value: this.cookie.slice(split + 1), url: `${this.base}/` },
    ]);
  }

  /** The job once it has ended (succeeded, failed or cancelled); two minutes at most. */
  async waitForJob(jobId) {
    for (let i = 0; i < 600; i += 1) {
      const job = await this.get(`/api/v1/jobs/${jobId}`);
      if (['succeeded', 'failed', 'cancelled'].includes(job.state)) return job;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`job ${jobId} did not finish`);
  }
  post(path, body) { return this.call('POST', path, body); }

  /** Uploads a script resource and makes that version the one nodes get. */
  async uploadScript(name, bytes) {
    const view = await this.call('POST', `/api/v1/resources/scripts/${name}`, bytes, 'application/octet-stream');
    await this.post(`/api/v1/resources/scripts/${name}/versions/${view.version}/stage`);
  }
}
