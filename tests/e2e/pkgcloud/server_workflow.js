// pkgcloud's OpenStack compute client, unchanged, against an OpenKeel all-in-one: Keystone v3
// password login, flavors, images, create a server, wait for it, list, destroy.
// Usage: node server_workflow.js <auth url> <password> <image id>
'use strict';
const pkgcloud = require('pkgcloud');

const [authUrl, password, imageId] = process.argv.slice(2);
const client = pkgcloud.compute.createClient({
  provider: 'openstack',
  keystoneAuthVersion: 'v3',
  authUrl,
  username: 'admin',
  password,
  tenantName: 'admin',
  domainName: 'Default',
  region: 'RegionOne',
});

const call = (fn, ...args) => new Promise((resolve, reject) => {
  fn.call(client, ...args, (err, result) => (err ? reject(err) : resolve(result)));
});

(async () => {
  const flavors = await call(client.getFlavors);
  const flavor = flavors.find((f) => f.name === 'm1.tiny');
  const images = await call(client.getImages);
  const image = images.find((i) => i.id === imageId);
  const server = await call(client.createServer, { name: 'pkgcloud-vm', flavor, image });
  const deadline = Date.now() + 60000;
  let found = await call(client.getServer, server.id);
  while (found.status !== 'RUNNING' && found.status !== 'ERROR' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    found = await call(client.getServer, server.id);
  }
  console.log(`status ${found.status}`);
  const listed = await call(client.getServers);
  console.log(`listed ${listed.some((s) => s.id === server.id)}`);
  await call(client.destroyServer, server.id);
  console.log('destroyed');
})().catch((err) => {
  console.error(err && (err.stack || JSON.stringify(err)));
  process.exit(1);
});
