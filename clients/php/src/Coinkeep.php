<?php
/**
 * Coinkeep API client for PHP 8.1+, on the curl, hash and json extensions only.
 *
 *   $ck = new Coinkeep\Client('https://pay.example.com', $keyId, $secret);
 *   $invoice = $ck->invoices->create(['amount' => '25.00', 'currency' => 'USD', 'order_id' => 'A-1001']);
 *   foreach ($ck->invoices->list(['status' => 'paid']) as $inv) { echo $inv['id'], "\n"; }
 *
 * Every request is signed (SPEC "Canonical string"), every POST carries an Idempotency-Key kept
 * across retries, and network errors, 409 idempotency.in_progress, 429 and 5xx are retried with
 * exponential backoff and jitter. API errors are thrown as ApiError (and subclasses) with
 * errorCode and details from the error envelope.
 */

declare(strict_types=1);

namespace Coinkeep;

class CoinkeepException extends \RuntimeException
{
}

/** An error answer of the API: branch on $errorCode; $details is the envelope's details. */
class ApiError extends CoinkeepException
{
    public function __construct(
        public readonly int $status,
        public readonly string $errorCode,
        string $message,
        public readonly array $details = [],
        public readonly array $headers = [],
    ) {
        parent::__construct("$status $errorCode: $message", $status);
    }

    public static function fromResponse(int $status, string $raw, array $headers): self
    {
        $env = json_decode($raw, true);
        $e = is_array($env) && is_array($env['error'] ?? null) ? $env['error'] : null;
        [$code, $message, $details] = is_string($e['code'] ?? null)
            ? [$e['code'], (string) ($e['message'] ?? ''), is_array($e['details'] ?? null) ? $e['details'] : []]
            : ["http_$status", substr($raw, 0, 200), []];
        $class = match (true) {
            in_array($status, [400, 413, 422], true) => InvalidRequestError::class,
            $status === 401 => AuthenticationError::class,
            $status === 403 => PermissionDeniedError::class,
            $status === 404 => NotFoundError::class,
            $status === 409 => ConflictError::class,
            $status === 429 => RateLimitError::class,
            $status >= 500 => ServerError::class,
            default => self::class,
        };
        return new $class($status, $code, $message, $details, $headers);
    }
}

class InvalidRequestError extends ApiError {}
class AuthenticationError extends ApiError {}
class PermissionDeniedError extends ApiError {}
class NotFoundError extends ApiError {}
class ConflictError extends ApiError {}
class RateLimitError extends ApiError {}
class ServerError extends ApiError {}

/** No answer: the connection failed or timed out on every attempt. */
class NetworkError extends CoinkeepException
{
}

/** A delivery not to be trusted; $reason is missing_header, invalid_timestamp, invalid_signature or timestamp_outside_tolerance. */
class WebhookVerificationError extends CoinkeepException
{
    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }
}

final class Signature
{
    /** X-Signature: hex HMAC-SHA256(secret as given, timestamp LF METHOD LF target LF hex sha256(body)). */
    public static function request(string $secret, string $timestamp, string $method, string $target, string $body = ''): string
    {
        $canonical = $timestamp . "\n" . strtoupper($method) . "\n" . $target . "\n" . hash('sha256', $body);
        return hash_hmac('sha256', $canonical, $secret);
    }

    /** A delivery's X-Signature: "sha256=" + hex HMAC-SHA256(secret as given, timestamp "." raw body). */
    public static function webhook(string $secret, string $timestamp, string $rawBody): string
    {
        return 'sha256=' . hash_hmac('sha256', $timestamp . '.' . $rawBody, $secret);
    }
}

final class Webhook
{
    /**
     * Checks a delivery over its raw body (file_get_contents('php://input')) and returns the event
     * (event_id, type, created_at, data). $headers: getallheaders(), $_SERVER, or any name => value
     * array. Throws WebhookVerificationError. Deduplicate by event_id afterwards.
     */
    public static function verify(string $rawBody, array $headers, string $secret, int $tolerance = 300, ?int $now = null): array
    {
        $timestamp = self::header($headers, 'X-Timestamp');
        $signature = self::header($headers, 'X-Signature');
        if ($timestamp === null || $signature === null) {
            throw new WebhookVerificationError('missing_header', 'X-Timestamp and X-Signature are required');
        }
        if (!preg_match('/^[0-9]{1,12}$/D', $timestamp)) {
            throw new WebhookVerificationError('invalid_timestamp', 'X-Timestamp must be decimal Unix seconds');
        }
        if (!hash_equals(Signature::webhook($secret, $timestamp, $rawBody), $signature)) {
            throw new WebhookVerificationError('invalid_signature', 'the signature does not match the body, timestamp and secret');
        }
        if (abs(($now ?? time()) - (int) $timestamp) > $tolerance) {
            throw new WebhookVerificationError('timestamp_outside_tolerance', "X-Timestamp is more than $tolerance s from now");
        }
        return json_decode($rawBody, true, 512, JSON_THROW_ON_ERROR);
    }

    private static function header(array $headers, string $name): ?string
    {
        $server = 'HTTP_' . strtoupper(str_replace('-', '_', $name));
        foreach ($headers as $k => $v) {
            if (strcasecmp((string) $k, $name) === 0 || $k === $server) {
                return is_array($v) ? (count($v) === 1 ? (string) $v[0] : null) : (string) $v;
            }
        }
        return null;
    }
}

/** A collection of the API; objects are decoded JSON arrays. */
class Resource
{
    public function __construct(protected Client $client, protected string $path)
    {
    }

    protected function url(string $id, string ...$action): string
    {
        return implode('/', [$this->path, rawurlencode($id), ...$action]);
    }

    public function create(array $params, ?string $idempotencyKey = null): array
    {
        return $this->client->request('POST', $this->path, body: $params, idempotencyKey: $idempotencyKey);
    }

    public function get(string $id): array
    {
        return $this->client->request('GET', $this->url($id));
    }

    /** Every item of the list, page after page ('limit' sets the page size). */
    public function list(array $filters = []): \Generator
    {
        return $this->client->paginate($this->path, $filters);
    }

    /**
     * POST to id/action: 'cancel', 'archive', 'restore', 'retry', 'rotate-secret'; 'accept' for an
     * underpaid invoice; 'credit' and 'refund' for a stray payment.
     */
    public function action(string $id, string $action, array $params = [], ?string $idempotencyKey = null): array
    {
        return $this->client->request('POST', $this->url($id, $action), body: $params, idempotencyKey: $idempotencyKey);
    }

    public function update(string $id, array $params): array
    {
        return $this->client->request('PATCH', $this->url($id), body: $params);
    }

    public function delete(string $id): void
    {
        $this->client->request('DELETE', $this->url($id));
    }
}

class Client
{
    public readonly Resource $invoices;
    public readonly Resource $addresses;
    public readonly Resource $transactions;
    public readonly Resource $withdrawals;
    public readonly Resource $refunds;
    public readonly Resource $strays;
    public readonly Resource $webhookEndpoints;
    public readonly Resource $webhookDeliveries;
    /** @var array<string,int> signatures used, with their timestamps */
    private array $used = [];

    /**
     * @param int   $maxRetries extra attempts after a retryable failure
     * @param float $backoff    first wait in seconds, doubling up to $backoffMax, with jitter
     */
    public function __construct(
        private string $baseUrl,
        private string $keyId,
        #[\SensitiveParameter] private string $secret,
        public float $timeout = 30.0,
        public int $maxRetries = 3,
        public float $backoff = 0.5,
        public float $backoffMax = 8.0,
    ) {
        $this->baseUrl = rtrim($baseUrl, '/');
        $this->invoices = new Resource($this, '/v1/invoices');
        $this->addresses = new Resource($this, '/v1/addresses');
        $this->transactions = new Resource($this, '/v1/transactions');
        $this->withdrawals = new Resource($this, '/v1/withdrawals');
        $this->refunds = new Resource($this, '/v1/refunds');
        $this->strays = new Resource($this, '/v1/strays');
        $this->webhookEndpoints = new Resource($this, '/v1/webhooks/endpoints');
        $this->webhookDeliveries = new Resource($this, '/v1/webhooks/deliveries');
    }

    public function balances(array $query = []): \Generator
    {
        return $this->paginate('/v1/balances', $query);
    }

    public function rates(string $fiat): array
    {
        return $this->request('GET', '/v1/rates', query: ['fiat' => $fiat]);
    }

    public function currencies(): array
    {
        return $this->request('GET', '/v1/currencies');
    }

    /** Yields the items of a keyset-paged list, following next_cursor to the last page. */
    public function paginate(string $path, array $query = []): \Generator
    {
        while (true) {
            $page = $this->request('GET', $path, query: $query);
            foreach ($page['items'] as $item) {
                yield $item; // keys run on across pages, so iterator_to_array() keeps every item
            }
            if (empty($page['next_cursor'])) {
                return;
            }
            $query['cursor'] = $page['next_cursor'];
        }
    }

    /** One API call with its retries; returns the decoded JSON answer ([] when empty). */
    public function request(string $method, string $path, ?array $body = null, array $query = [], ?string $idempotencyKey = null): array
    {
        $method = strtoupper($method);
        $query = array_map(fn ($v) => is_bool($v) ? ($v ? 'true' : 'false') : $v, array_filter($query, fn ($v) => $v !== null));
        $target = $path . ($query ? '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986) : '');
        $data = $body === null ? '' : ($body === [] ? '{}' : json_encode($body, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR));
        $headers = ['X-API-Key: ' . $this->keyId, 'Accept: application/json', 'User-Agent: coinkeep-php/0.1.0', 'Expect:'];
        if ($body !== null) {
            $headers[] = 'Content-Type: application/json';
        }
        if ($method === 'POST') {
            $headers[] = 'Idempotency-Key: ' . ($idempotencyKey ?? bin2hex(random_bytes(16)));
        }
        for ($attempt = 0; ; $attempt++) {
            [$timestamp, $signature] = $this->sign($method, $target, $data);
            $wait = null;
            try {
                [$status, $raw, $resHeaders] = $this->send($method, $target, $data, [...$headers, "X-Timestamp: $timestamp", "X-Signature: $signature"]);
                if ($status < 300) {
                    return $raw === '' ? [] : json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
                }
                $error = ApiError::fromResponse($status, $raw, $resHeaders);
                if ($attempt >= $this->maxRetries || !self::retryable($error)) {
                    throw $error;
                }
                $retryAfter = $resHeaders['retry-after'] ?? $error->details['retry_after'] ?? null;
                $wait = $status === 429 && is_numeric($retryAfter) ? max(0.0, (float) $retryAfter) : null;
            } catch (NetworkError $e) {
                if ($attempt >= $this->maxRetries) {
                    throw $e;
                }
            }
            $delay = min($this->backoffMax, $this->backoff * 2 ** $attempt);
            $seconds = $wait !== null ? $wait + self::random(0, $this->backoff) : self::random($delay / 2, $delay);
            usleep((int) ($seconds * 1e6));
        }
    }

    /** @return array{int, string, array<string,string>} status, body, lower-cased response headers */
    private function send(string $method, string $target, string $data, array $headers): array
    {
        $resHeaders = [];
        $ch = curl_init($this->baseUrl . $target);
        curl_setopt_array($ch, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false, // a signed request is never sent on elsewhere
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_TIMEOUT_MS => (int) ($this->timeout * 1000),
            CURLOPT_HEADERFUNCTION => function ($ch, string $line) use (&$resHeaders): int {
                if (str_contains($line, ':')) {
                    [$name, $value] = explode(':', $line, 2);
                    $resHeaders[strtolower(trim($name))] = trim($value);
                }
                return strlen($line);
            },
        ]);
        if ($data !== '') {
            curl_setopt($ch, CURLOPT_POSTFIELDS, $data);
        }
        $raw = curl_exec($ch);
        $status = curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        $error = curl_error($ch);
        curl_close($ch);
        if ($raw === false || $status === 0) {
            throw new NetworkError("$method $target: $error");
        }
        return [$status, (string) $raw, $resHeaders];
    }

    /**
     * A timestamp and signature this client has not used: the server accepts a signature once, so
     * an identical request in the same second is stamped a second later (never earlier).
     */
    private function sign(string $method, string $target, string $data): array
    {
        $now = time();
        $this->used = array_filter($this->used, fn (int $t) => $t >= $now);
        for ($ts = $now; ; $ts++) {
            $signature = Signature::request($this->secret, (string) $ts, $method, $target, $data);
            if (!isset($this->used[$signature])) {
                $this->used[$signature] = $ts;
                return [(string) $ts, $signature];
            }
        }
    }

    private static function retryable(ApiError $e): bool
    {
        if ($e->status === 409) {
            return $e->errorCode === 'idempotency.in_progress';
        }
        if ($e->status >= 500) { // a replayed 5xx stays what it was: look the object up instead
            return strcasecmp($e->headers['idempotent-replayed'] ?? '', 'true') !== 0;
        }
        return $e->status === 429;
    }

    private static function random(float $min, float $max): float
    {
        return $min + ($max - $min) * (random_int(0, PHP_INT_MAX) / PHP_INT_MAX);
    }
}
