/**
 * Where webhooks may go: the address table (IPv4, IPv6, IPv4-mapped, NAT64,
 * 6to4), URL checks at configuration with names resolving to private
 * addresses, and the connection-time check against DNS rebinding.
 */
import { expect } from 'chai';
import { checkEndpointUrl, forbiddenAddressReason, guardedLookup, type Resolver } from '../../src/workers/webhooks/address-guard.ts';
import { createAgents, postWebhook } from '../../src/workers/webhooks/post.ts';
import { startHarness } from './harness.ts';
import { newOrganization, Receiver, until } from './support.ts';

const fakeDns = (table: Record<string, string[]>): Resolver => async (host) => {
  const addresses = table[host];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('webhooks: address guard', () => {
  const table: [string, string | null][] = [
    ['8.8.8.8', null], ['1.1.1.1', null], ['172.32.0.1', null], ['100.128.0.1', null], ['2606:4700:4700::1111', null],
    ['2001:4860:4860::8888', null], ['::ffff:8.8.8.8', null], ['64:ff9b::808:808', null], ['2002:808:808::1', null],
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'], ['10.0.0.1', 'private'], ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'], ['192.168.1.1', 'private'], ['169.254.1.1', 'link-local'], ['169.254.169.254', 'cloud metadata'],
    ['100.64.0.1', 'shared (CGNAT)'], ['100.127.255.255', 'shared (CGNAT)'], ['0.0.0.0', 'unspecified ("this network")'],
    ['224.0.0.1', 'multicast'], ['255.255.255.255', 'reserved or broadcast'], ['192.0.2.10', 'documentation'], ['198.18.0.1', 'benchmarking'],
    ['::', 'unspecified'], ['::1', 'loopback'], ['fc00::1', 'private (unique local)'], ['fd12:3456::1', 'private (unique local)'],
    ['fd00:ec2::254', 'cloud metadata'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'], ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'], ['::ffff:127.0.0.1', 'IPv4-mapped loopback'], ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['::ffff:169.254.169.254', 'IPv4-mapped cloud metadata'], ['::ffff:10.1.2.3', 'IPv4-mapped private'], ['64:ff9b::a00:1', 'NAT64 private'],
    ['2002:c0a8:101::1', '6to4 private'], ['::127.0.0.1', 'reserved'], ['not-an-ip', 'invalid'],
  ];
  for (const [ip, reason] of table) {
    it(`${ip}: ${reason ?? 'allowed'}`, () => expect(forbiddenAddressReason(ip)).to.equal(reason));
  }

  const dns = fakeDns({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::1'],
    'internal.example.com': ['10.0.0.5'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'v6local.example.com': ['::1'],
    'mapped.example.com': ['::ffff:192.168.0.1'],
    localhost: ['127.0.0.1', '::1'],
  });
  const urls: [string, RegExp | null][] = [
    ['https://hooks.example.com/webhooks?x=1', null],
    ['https://93.184.216.34/hook', null],
    ['http://hooks.example.com/hook', /must use https/],
    ['https://internal.example.com/hook', /10\.0\.0\.5 is a private address \(internal\.example\.com resolves to 10\.0\.0\.5\)/],
    ['https://mixed.example.com/hook', /127\.0\.0\.1 is a loopback address/],
    ['https://v6local.example.com/hook', /::1 is a loopback address/],
    ['https://mapped.example.com/hook', /IPv4-mapped private/],
    ['https://localhost:8443/hook', /loopback/],
    ['https://127.0.0.1/hook', /127\.0\.0\.1 is a loopback address/],
    ['https://[::1]/hook', /::1 is a loopback address/],
    ['https://[::ffff:127.0.0.1]/hook', /IPv4-mapped loopback/],
    ['https://169.254.169.254/latest/meta-data', /cloud metadata/],
    ['https://0x7f.1/hook', /127\.0\.0\.1 is a loopback/], // WHATWG URL normalizes odd IPv4 forms first
    ['https://2130706433/hook', /127\.0\.0\.1 is a loopback/],
    ['https://nowhere.example.com/hook', /does not resolve \(ENOTFOUND\)/],
    ['https://user:pw@hooks.example.com/hook', /must not embed credentials/],
    ['ftp://hooks.example.com/', /must use https/],
    ['not a url', /is not a URL/],
    ['https://93.184.216.34:0/hook', /port 0/],
    [`https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`, null],
    [`https://hooks.example.com/${'a'.repeat(2049 - 'https://hooks.example.com/'.length)}`, /at most 2048 characters/],
    [`https://hooks.example.com/${'é'.repeat(400)}`, /at most 2048 characters once encoded/],
  ];
  for (const [url, error] of urls) {
    it(`configuration: ${url.length > 100 ? `${url.slice(0, 40)}... (${url.length} characters)` : url} ${error ? 'refused' : 'accepted'}`, async () => {
      const check = checkEndpointUrl(url, { allowInsecure: false, resolve: dns });
      if (error) {
        let message = '';
        await check.catch((e: Error) => (message = e.message));
        expect(message).to.match(error);
      } else {
        expect(await check).to.be.a('string');
      }
    });
  }

  it('insecure mode (tests, local development) accepts http:// loopback receivers', async () => {
    expect(await checkEndpointUrl('http://127.0.0.1:9999/hook', { allowInsecure: true })).to.equal('http://127.0.0.1:9999/hook');
  });

  it('connection time: the lookup refuses a forbidden answer and passes checked ones, in both shapes', async () => {
    const lookup = guardedLookup(dns) as any;
    const call = (host: string, options: object) => new Promise<any[]>((resolve) => lookup(host, options, (...args: any[]) => resolve(args)));
    expect((await call('internal.example.com', {}))[0].code).to.equal('EADDRNOTALLOWED');
    expect(await call('hooks.example.com', { all: true })).to.deep.equal([null, [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }]]);
    expect(await call('hooks.example.com', {})).to.deep.equal([null, '93.184.216.34', 4]);
  });

  describe('DNS rebinding', () => {
    let receiver: Receiver;
    beforeEach(async () => (receiver = await new Receiver().start()));
    afterEach(() => receiver.stop());

    it('the agent connects to the address its lookup returns, keeping the URL host (control)', async () => {
      const agents = createAgents(((_h: string, o: any, cb: any) => (o?.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4))) as any);
      const r = await postWebhook({ url: `http://hook.test:${receiver.port}/x`, headers: {}, body: Buffer.from('{}'), timeoutMs: 2000, allowInsecure: true, agents });
      expect(r.statusCode).to.equal(200);
      expect(receiver.requests[0].headers.host).to.equal(`hook.test:${receiver.port}`);
    });

    it('a name that passed configuration but now resolves to loopback is refused at connection; nothing is sent', async () => {
      let answers = 0;
      const rebinding: Resolver = async () => [{ address: answers++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
      const url = `https://rebind.example.com:${receiver.port}/hook`;
      expect(await checkEndpointUrl(url, { allowInsecure: false, resolve: rebinding })).to.equal(url);
      const h = await startHarness({ senders: 0 });
      try {
        const org = await newOrganization(h.t.db);
        await h.t.db.insertInto('webhook_endpoints').values({ id: '00000000-0000-4000-8000-000000000001', organization_id: org, url, secret: 'whsec_x', secret_hint: 'x' }).execute();
        await h.t.db.insertInto('webhook_deliveries').values({ id: '00000000-0000-4000-8000-000000000002', endpoint_id: '00000000-0000-4000-8000-000000000001', organization_id: org, event_id: '00000000-0000-4000-8000-000000000003', event_type: 'invoice.created', body: '{}', next_attempt_at: new Date() }).execute();
        h.addSender({ allowInsecure: false, resolve: rebinding });
        await until(async () => (await h.t.db.selectFrom('webhook_attempts').select('error').execute()).length === 1);
        const attempt = await h.t.db.selectFrom('webhook_attempts').selectAll().executeTakeFirstOrThrow();
        expect(attempt.status_code).to.equal(null);
        expect(attempt.error).to.match(/127\.0\.0\.1 is a loopback address \(rebind\.example\.com resolves to 127\.0\.0\.1\)/);
        expect(receiver.requests).to.have.length(0);
      } finally {
        await h.stop();
      }
    });
  });
});
