/**
 * The direction of imports (README, "Tests and benchmarks"), checked in `npm test`:
 *
 *   shared ← config, db ← chains, ledger, rates, catalog, events ← domains ← http, jobs, admin ← daemon ← cli
 *
 * A domain is every other folder of src/ (auth, team, invoices, wallet, transactions, webhooks and
 * those still to come), so a new domain is held by these rules without naming it here. Modules of
 * one layer may import each other; nothing imports a layer above its own.
 *
 * A chain family is one folder (src/chains/<family>/), but its money-moving half, the payout rail,
 * sweeper and send queue under src/chains/<family>/payouts/, works with the payout worker, the
 * money movement and the wallet's signer: it is a domain, and the rest of chains/ never imports it.
 * So is src/chains/payout-families.ts, the registry of those halves.
 */
const FOUNDATION = 'shared|config|db|chains|ledger|rates|catalog|events';
const OUTER = 'http|jobs|admin|daemon|cli|dev|dashboard';
const FAMILY_PAYOUTS = '^src/chains/([^/]+/payouts/|payout-families\\.ts$)';
const DOMAIN = `^src/(?!(?:${FOUNDATION}|${OUTER})/)[^/]+/|${FAMILY_PAYOUTS}`;
/** The chains' SDKs: transactions, addresses and signing. */
const CHAIN_SDK = '(^|/)node_modules/(bitcoinjs-lib|ethers|tronweb|ecpair)/';
/** Key-tree libraries: the wallet's seed and public derivation use them too. */
const KEY_SDK = '(^|/)node_modules/(bip32|bip39|tiny-secp256k1)/';

/** A module's HTTP edge: it lives with its module but belongs to the http layer. */
const HTTP_EDGE = '\\.(routes|middleware)\\.ts$';

/**
 * A chain family's built-in networks (src/chains/<family>/presets.ts): data only, importing nothing
 * of src/, so the config parser (which fills a chain from its `preset`) and `coinkeep init --preset`
 * may read them below the chains layer.
 */
const PRESETS = '^src/chains/[^/]+/presets\\.ts$';

/** The signer process's entry (`coinkeep signer`, the seed's part of `coinkeep init`): the only file of it the CLI imports. */
const SIGNER_ENTRY = '^src/wallet/signer-process/main\\.ts$';

const layer = (name, from, allowed, comment, alsoAllowed) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from, pathNot: `${HTTP_EDGE}|${FAMILY_PAYOUTS}` },
  to: { path: '^src/', pathNot: `^src/(?!chains/([^/]+/payouts/|payout-families\\.ts$))(${allowed})/${alsoAllowed ? `|${alsoAllowed}` : ''}` },
});

module.exports = {
  forbidden: [
    layer('shared-is-the-floor', '^src/shared/', 'shared', 'shared/ imports nothing else of src/'),
    layer(
      'config-and-db-import-only-shared',
      '^src/(config|db)/',
      'shared|config|db',
      "config/ and db/ import only shared/ and each other (config/ also the families' presets: data only)",
      PRESETS,
    ),
    {
      name: 'presets-are-data',
      comment: "a family's presets import nothing of src/: the config parser reads them below the chains layer",
      severity: 'error',
      from: { path: PRESETS },
      to: { path: '^src/' },
    },
    layer(
      'foundations-import-no-domain',
      `^src/(${FOUNDATION})/`,
      FOUNDATION,
      "chains (but a family's payouts/), ledger, rates, catalog and events import only the layers below them",
    ),
    {
      name: 'domains-import-no-outer-layer',
      comment: "a domain's services import no http/, jobs, admin, daemon, CLI or dev tooling: wiring lives in daemon/, query parsing and page types in shared/",
      severity: 'error',
      from: { path: DOMAIN, pathNot: HTTP_EDGE },
      to: { path: `^src/(${OUTER})/` },
    },
    {
      name: 'http-jobs-admin-import-no-daemon',
      comment: 'http/, jobs/, admin/ and the HTTP edges are wired by the daemon, never the other way',
      severity: 'error',
      from: { path: `^src/(http|jobs|admin)/|${HTTP_EDGE}` },
      to: { path: '^src/(daemon|cli|dev)/' },
    },
    {
      name: 'daemon-imports-no-cli',
      severity: 'error',
      from: { path: '^src/daemon/' },
      to: { path: '^src/(cli|dev)/' },
    },
    {
      name: 'only-the-cli-runs-dev-tooling',
      comment: 'src/dev (sandbox chains, payers) is started by the CLI only, and never imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli|dev)/' },
      to: { path: '^src/dev/' },
    },
    {
      name: 'dev-imports-no-cli',
      severity: 'error',
      from: { path: '^src/dev/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'cli-reads-the-admin-contract',
      comment:
        'the CLI calls the admin API and takes its request and response types from admin/contract.ts; ' +
        'it may start the daemon and, for init and migrate, open the database (db/) before any daemon runs',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/', pathNot: `^src/(cli|shared|config|db|daemon|dev|dashboard)/|^src/admin/contract\\.ts$|${PRESETS}|${SIGNER_ENTRY}` },
    },
    {
      name: 'only-the-signer-opens-the-seed',
      comment:
        'the wallet seed is the signer process\'s alone (PRODUCT §18): its vault, its server and WalletSigner (the one place a private key is derived) ' +
        'are imported by src/wallet/signer-process/ and, through its entry main.ts, by the CLI commands that run it (signer, init, dev) only; never by the daemon',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/wallet/signer-process/|^src/cli/commands/(signer|lifecycle|dev)\\.ts$` },
      to: { path: `^src/wallet/(signer-process/|signer\\.ts$)` },
    },
    {
      name: 'dashboard-reads-the-admin-api',
      comment: 'the dashboard reads the admin API only: its types from admin/contract.ts, its calls through the CLI admin client',
      severity: 'error',
      from: { path: '^src/dashboard/' },
      to: { path: '^src/', pathNot: '^src/(dashboard|shared)/|^src/admin/contract\\.ts$|^src/cli/admin-client\\.ts$' },
    },
    {
      name: 'routes-import-no-typeorm',
      comment: 'routes go through services; queries belong to services and db/',
      severity: 'error',
      from: { path: '\\.routes\\.ts$' },
      to: { path: '(^|/)node_modules/typeorm/' },
    },
    {
      name: 'chain-sdk-only-in-chains-and-signer',
      comment: 'bitcoinjs-lib, ethers, tronweb and ecpair belong to src/chains, the wallet signer and src/dev',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(chains|dev)/|^src/wallet/signer' },
      to: { path: CHAIN_SDK },
    },
    {
      name: 'key-sdk-only-in-chains-and-wallet',
      comment: 'bip32, bip39 and tiny-secp256k1 belong to src/chains, src/wallet (seed and public derivation; private keys only in its signer) and src/dev',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(chains|wallet|dev)/' },
      to: { path: KEY_SDK },
    },
    {
      name: 'no-circular',
      comment: 'no module reaches itself through its imports: a cycle makes load order matter and hides which way a dependency goes',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
