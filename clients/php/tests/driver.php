<?php
// Test driver run by the repository's ava tests (test/integration/clients); prints one JSON object.
// Commands: vectors REQUEST_JSON WEBHOOK_JSON, e2e, verify BODY_FILE (headers as JSON on stdin),
// retries, strays, refunds. Settings come from COINKEEP_URL, COINKEEP_KEY, COINKEEP_SECRET, SINK_URL,
// WEBHOOK_SECRET, and for refunds COIN_ID, PAID_INVOICE_ID and UNDERPAID_INVOICE_ID.
declare(strict_types=1);

require __DIR__ . '/../src/Coinkeep.php';

use Coinkeep\ApiError;
use Coinkeep\Client;
use Coinkeep\CoinkeepException;
use Coinkeep\Signature;
use Coinkeep\Webhook;
use Coinkeep\WebhookVerificationError;

function errorJson(CoinkeepException $e): array
{
    $class = (new ReflectionClass($e))->getShortName();
    if ($e instanceof ApiError) {
        return ['class' => $class, 'status' => $e->status, 'code' => $e->errorCode, 'details' => (object) $e->details];
    }
    if ($e instanceof WebhookVerificationError) {
        return ['class' => $class, 'reason' => $e->reason];
    }
    return ['class' => $class, 'message' => $e->getMessage()];
}

function attempt(callable $fn): array
{
    try {
        return ['ok' => $fn()];
    } catch (CoinkeepException $e) {
        return ['error' => errorJson($e)];
    }
}

function client(array $opts = []): Client
{
    return new Client(getenv('COINKEEP_URL'), getenv('COINKEEP_KEY'), getenv('COINKEEP_SECRET'), ...$opts);
}

function vectors(string $requestFile, string $webhookFile): array
{
    $req = json_decode(file_get_contents($requestFile), true, 512, JSON_THROW_ON_ERROR);
    $wh = json_decode(file_get_contents($webhookFile), true, 512, JSON_THROW_ON_ERROR);
    $out = ['requests' => [], 'webhooks' => [], 'tolerance' => []];
    foreach ($req['vectors'] as $v) {
        $out['requests'][$v['name']] = Signature::request($v['secret'], $v['timestamp'], $v['method'], $v['target'], $v['body']);
    }
    $ok = fn (array $c, int $now) => isset(attempt(fn () => Webhook::verify($c['body'], ['x-timestamp' => $c['timestamp'], 'X-Signature' => $c['signature']], $wh['secret'], now: $now))['ok']);
    foreach ($wh['cases'] as $c) {
        $out['webhooks'][$c['name']] = $ok($c, (int) $c['timestamp']);
    }
    foreach ([300, -300, 301, -301] as $d) {
        $out['tolerance'][] = $ok($wh['cases'][0], (int) $wh['cases'][0]['timestamp'] + $d);
    }
    return $out;
}

function e2e(): array
{
    $ck = client();
    $endpoint = $ck->webhookEndpoints->create(['url' => getenv('SINK_URL'), 'event_types' => ['invoice.expired'], 'secret' => getenv('WEBHOOK_SECRET')]);
    $created = [];
    for ($i = 0; $i < 3; $i++) {
        $created[] = $ck->invoices->create(['amount' => '10.00', 'currency' => 'USD', 'order_id' => "php-$i"]);
    }
    $read = $ck->invoices->get($created[0]['id']);
    $listed = array_map(fn ($inv) => $inv['id'], iterator_to_array($ck->invoices->list(['limit' => 2])));
    $missing = attempt(fn () => $ck->invoices->get('00000000-0000-4000-8000-000000000000'));
    $invalid = attempt(fn () => $ck->invoices->create(['amount' => 'ten', 'currency' => 'USD']));
    return ['endpoint_id' => $endpoint['id'], 'created' => $created, 'read' => $read, 'listed' => array_values($listed), 'missing' => $missing, 'invalid' => $invalid];
}

function verify(string $bodyFile): array
{
    $headers = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
    return attempt(fn () => Webhook::verify(file_get_contents($bodyFile), $headers, getenv('WEBHOOK_SECRET')));
}

function retries(): array
{
    $ck = client(['maxRetries' => 4, 'backoff' => 0.05, 'backoffMax' => 0.2]);
    return [
        'first' => attempt(fn () => $ck->invoices->create(['amount' => '1', 'currency' => 'USD'])),
        'replayed' => attempt(fn () => $ck->withdrawals->create(['amount' => '1', 'coin_id' => 'c', 'to_address' => 'a', 'payout_id' => 'p'])),
        'given' => attempt(fn () => $ck->invoices->create(['amount' => '2', 'currency' => 'USD'], 'my-key-1')),
    ];
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

function ids(\Generator $items): array
{
    return array_values(array_map(fn ($item) => $item['id'], iterator_to_array($items)));
}

function strays(): array
{
    $ck = client();
    return [
        'listed' => ids($ck->strays->list(['limit' => 10])),
        'missing' => attempt(fn () => $ck->strays->get(UNKNOWN)),
        'credit_missing' => attempt(fn () => $ck->strays->action(UNKNOWN, 'credit')),
        'refund_missing' => attempt(fn () => $ck->strays->action(UNKNOWN, 'refund')),
    ];
}

function refunds(): array
{
    $ck = client();
    [$paid, $underpaid] = [getenv('PAID_INVOICE_ID'), getenv('UNDERPAID_INVOICE_ID')];
    $unpaid = $ck->invoices->create(['amount' => '0.001', 'currency' => 'BTC', 'coin_id' => getenv('COIN_ID'), 'order_id' => 'php-unpaid']);
    $out = [
        'unpaid' => $unpaid,
        'exceeds' => attempt(fn () => $ck->refunds->create(['invoice_id' => $unpaid['id'], 'amount' => '0.0001'])),
        'unpaid_refunds' => ids($ck->refunds->list(['invoice_id' => $unpaid['id']])),
        'missing' => attempt(fn () => $ck->refunds->get(UNKNOWN)),
        'cancel_missing' => attempt(fn () => $ck->refunds->action(UNKNOWN, 'cancel')),
        'accepted' => $ck->invoices->action($underpaid, 'accept'),
        'accept_again' => attempt(fn () => $ck->invoices->action($underpaid, 'accept')),
        'accept_new' => attempt(fn () => $ck->invoices->action($unpaid['id'], 'accept')),
    ];
    $params = ['invoice_id' => $paid, 'amount' => '0.0002', 'refund_id' => 'php-r1', 'comment' => 'php client'];
    $out['created'] = $ck->refunds->create($params);
    $id = $out['created']['id'];
    $out['again'] = $ck->refunds->create($params);
    $out['read'] = $ck->refunds->get($id);
    $out['listed'] = ids($ck->refunds->list(['invoice_id' => $paid, 'limit' => 1]));
    $out['by_refund_id'] = ids($ck->refunds->list(['refund_id' => 'php-r1']));
    $out['cancelled'] = $ck->refunds->action($id, 'cancel');
    $out['cancel_again'] = attempt(fn () => $ck->refunds->action($id, 'cancel'));
    return $out;
}

$args = array_slice($argv, 2);
$out = match ($argv[1]) {
    'vectors' => vectors(...$args),
    'e2e' => e2e(),
    'verify' => verify(...$args),
    'retries' => retries(),
    'strays' => strays(),
    'refunds' => refunds(),
};
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR), "\n";
