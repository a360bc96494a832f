package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// DefaultTimeout is how long a receiver has to answer: the specification recommends 15 to 30
// seconds, and a 2xx status within it is a successful delivery.
const DefaultTimeout = 15 * time.Second

// MaxResponseSnippet is how much of a receiver's response body is read and kept. It is enough to
// show an operator why a delivery failed, and small enough that a hostile or broken receiver
// cannot make creditd read or store much.
const MaxResponseSnippet = 4 << 10

// UserAgent identifies creditd's deliveries in receivers' logs; the number is the version of
// our webhook format, not of creditd.
const UserAgent = "creditd-webhooks/1"

// maxResponseHeaderBytes bounds the response headers, which Go would otherwise read up to 1 MB.
const maxResponseHeaderBytes = 64 << 10

// Outcomes of a delivery attempt, as Result.Outcome reports them. They are short, stable
// strings meant for an operator's screen and for a metric label. A receiver that answers
// with a status that is neither 2xx nor 3xx gives "http_" and the status, such as "http_500".
const (
	// OutcomeSuccess means the receiver answered 2xx within the timeout.
	OutcomeSuccess = "success"
	// OutcomeRedirect means the receiver answered 3xx. Redirects are never followed; the endpoint's
	// URL should be updated instead.
	OutcomeRedirect = "redirect"
	// OutcomeTimeout means no response status arrived within the timeout.
	OutcomeTimeout = "timeout"
	// OutcomeConnectionRefused means nothing listens at the destination.
	OutcomeConnectionRefused = "connection_refused"
	// OutcomeConnectionReset means the receiver closed or reset the connection before answering.
	OutcomeConnectionReset = "connection_reset"
	// OutcomeDNSError means the host name did not resolve.
	OutcomeDNSError = "dns_error"
	// OutcomeTLSError means the TLS handshake failed, for example on an untrusted or expired certificate.
	OutcomeTLSError = "tls_error"
	// OutcomeNetworkError means some other failure prevented a request and response exchange.
	OutcomeNetworkError = "network_error"
	// OutcomeRefusedPrivateAddress means the URL or the address its name resolved to is not a public
	// address, and private destinations are not allowed. Nothing was sent.
	OutcomeRefusedPrivateAddress = "refused_private_address"
	// OutcomeInvalidURL means the endpoint URL fails ValidateURL. Nothing was sent.
	OutcomeInvalidURL = "invalid_url"
	// OutcomeInvalidSecret means a secret is missing or malformed. Nothing was sent.
	OutcomeInvalidSecret = "invalid_secret"
	// OutcomeInvalidRequest means the message id is malformed, a programming error. Nothing was sent.
	OutcomeInvalidRequest = "invalid_request"
	// OutcomeCanceled means the caller's context ended (creditd is shutting down); the attempt says
	// nothing about the receiver and should not count against it.
	OutcomeCanceled = "canceled"
)

// Options configure a Client. The zero value is the production configuration.
type Options struct {
	// AllowPrivate lets deliveries go to any address, including loopback and private networks,
	// and to http:// URLs. It exists for development and tests (serve --allow-private-webhooks)
	// and must stay off in production, where it would let endpoint owners reach internal services.
	AllowPrivate bool
	// Timeout bounds one attempt from dialing to the response status; zero means DefaultTimeout.
	Timeout time.Duration
	// TLSConfig, if set, is cloned for the connections; tests use it to trust httptest's
	// certificate. Nil means the system roots. TLS 1.2 is the minimum unless it says otherwise.
	TLSConfig *tls.Config
	// Resolver, if set, resolves host names; nil means the system resolver. The address check
	// applies to whatever it answers.
	Resolver *net.Resolver
	// Now is the clock for the webhook-timestamp header of a Request without a Timestamp and
	// for Retry-After dates; nil means time.Now.
	Now func() time.Time
}

// Client delivers webhooks over HTTPS with the defenses described in the package comment.
// It is safe for concurrent use and keeps connections to receivers alive between deliveries;
// each new connection is checked again.
type Client struct {
	http         *http.Client
	transport    *http.Transport
	allowPrivate bool
	timeout      time.Duration
	now          func() time.Time
}

// NewClient returns a Client configured by opts.
func NewClient(opts Options) *Client {
	dialer := &net.Dialer{KeepAlive: 30 * time.Second, Resolver: opts.Resolver}
	if !opts.AllowPrivate {
		dialer.ControlContext = refuseNonPublic
	}
	tlsConfig := &tls.Config{}
	if opts.TLSConfig != nil {
		tlsConfig = opts.TLSConfig.Clone()
	}
	if tlsConfig.MinVersion == 0 {
		tlsConfig.MinVersion = tls.VersionTLS12
	}
	transport := &http.Transport{
		// Never a proxy from the environment: it would make the address check meaningless and
		// send every endpoint's payload through a machine we did not choose.
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSClientConfig:        tlsConfig,
		TLSHandshakeTimeout:    10 * time.Second,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
	c := &Client{
		http: &http.Client{
			Transport: transport,
			// A 3xx is returned as it is, and classified as a failed attempt: following it could
			// lead to an address the endpoint's owner never registered.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		transport:    transport,
		allowPrivate: opts.AllowPrivate,
		timeout:      opts.Timeout,
		now:          opts.Now,
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Close drops the idle connections to receivers; the Client stays usable.
func (c *Client) Close() {
	c.transport.CloseIdleConnections()
}

// Request is one delivery attempt of one event to one endpoint.
type Request struct {
	// URL is the endpoint's URL.
	URL string
	// MessageID is the event's id, sent as webhook-id. It stays the same on every retry so the
	// receiver can use it to ignore duplicates.
	MessageID string
	// Timestamp is the time of this attempt, sent as webhook-timestamp and signed; the zero
	// value means now. The specification wants it fresh on every retry, so receivers can
	// refuse replays of old requests.
	Timestamp time.Time
	// Body is the event's JSON, sent byte for byte as signed.
	Body []byte
	// Secrets are the endpoint's active whsec_ secrets, newest first; two during a rotation's
	// grace period, each giving one v1 signature.
	Secrets []string
}

// Result says what happened to one delivery attempt.
type Result struct {
	// Success is true when the receiver answered 2xx within the timeout.
	Success bool
	// Outcome classifies the attempt: OutcomeSuccess, one of the other Outcome constants, or
	// "http_<status>". Show it to operators and use it as a metric label.
	Outcome string
	// StatusCode is the receiver's HTTP status, 0 when none arrived. 410 Gone means the receiver
	// asks to stop: the specification recommends disabling the endpoint.
	StatusCode int
	// Duration is how long the attempt took, including reading the response snippet.
	Duration time.Duration
	// ResponseSnippet is the start of the response body, at most MaxResponseSnippet bytes. It is
	// the receiver's data: store it for the operator, but do not log it.
	ResponseSnippet []byte
	// ResponseTruncated says that the body was longer than ResponseSnippet.
	ResponseTruncated bool
	// RetryAfter is the receiver's Retry-After as a delay from now, zero when absent or invalid.
	// The next attempt should not come before it; capping it is the caller's decision.
	RetryAfter time.Duration
	// Err is the underlying error when the attempt failed before a response arrived, or nil.
	// It carries details (a certificate problem, the refused address) for logs.
	Err error
}

// Deliver makes one attempt to deliver req: it validates the URL, signs the body with every
// secret, posts it, and reads at most MaxResponseSnippet bytes of the answer. It never follows
// redirects and never connects to a non-public address unless the Client allows it. Retrying
// is the caller's job (see NextAttempt), so an attempt's failure is a Result, not an error.
func (c *Client) Deliver(ctx context.Context, req Request) Result {
	start := time.Now()
	res := c.deliver(ctx, req)
	res.Duration = time.Since(start)
	res.Success = res.Outcome == OutcomeSuccess
	return res
}

func (c *Client) deliver(ctx context.Context, req Request) Result {
	if err := ValidateURL(req.URL, c.allowPrivate); err != nil {
		if errors.Is(err, ErrPrivateDestination) {
			return Result{Outcome: OutcomeRefusedPrivateAddress, Err: err}
		}
		return Result{Outcome: OutcomeInvalidURL, Err: err}
	}
	timestamp := req.Timestamp
	if timestamp.IsZero() {
		timestamp = c.now()
	}
	signature, err := Sign(req.Secrets, req.MessageID, timestamp, req.Body)
	if err != nil {
		if errors.Is(err, ErrInvalidMessageID) {
			return Result{Outcome: OutcomeInvalidRequest, Err: err}
		}
		return Result{Outcome: OutcomeInvalidSecret, Err: err}
	}

	attemptCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(attemptCtx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Result{Outcome: OutcomeInvalidURL, Err: err}
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("User-Agent", UserAgent)
	httpReq.Header.Set(HeaderID, req.MessageID)
	httpReq.Header.Set(HeaderTimestamp, strconv.FormatInt(timestamp.Unix(), 10))
	httpReq.Header.Set(HeaderSignature, signature)

	resp, err := c.http.Do(httpReq)
	if err != nil {
		return Result{Outcome: classifyError(ctx, err), Err: err}
	}
	defer resp.Body.Close()

	res := Result{StatusCode: resp.StatusCode, RetryAfter: c.retryAfter(resp.Header.Get("Retry-After"))}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		res.Outcome = OutcomeSuccess
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		res.Outcome = OutcomeRedirect
	default:
		res.Outcome = "http_" + strconv.Itoa(resp.StatusCode)
	}
	// The status decides the outcome; the body is only a snippet for the operator, so an error
	// or the timeout while reading it keeps whatever arrived. The rest is not drained: reading
	// an unbounded body to reuse the connection is what the limit is there to prevent.
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseSnippet+1))
	if len(snippet) > MaxResponseSnippet {
		snippet, res.ResponseTruncated = snippet[:MaxResponseSnippet], true
	}
	res.ResponseSnippet = snippet
	return res
}

// retryAfter reads a Retry-After header in either of its forms, delay-seconds or HTTP-date.
func (c *Client) retryAfter(value string) time.Duration {
	if value == "" {
		return 0
	}
	if seconds, err := strconv.ParseInt(value, 10, 64); err == nil {
		if seconds <= 0 || seconds > int64(365*24*time.Hour/time.Second) {
			return 0
		}
		return time.Duration(seconds) * time.Second
	}
	if at, err := http.ParseTime(value); err == nil {
		if d := at.Sub(c.now()); d > 0 {
			return d
		}
	}
	return 0
}

// classifyError turns a failed round trip into an Outcome. ctx is the caller's context, told
// apart from the attempt's own timeout so a shutdown is not blamed on the receiver.
func classifyError(ctx context.Context, err error) string {
	var (
		netErr     net.Error
		dnsErr     *net.DNSError
		opErr      *net.OpError
		certErr    *tls.CertificateVerificationError
		recordErr  tls.RecordHeaderError
		alertError tls.AlertError
	)
	switch {
	case errors.Is(err, ErrPrivateDestination):
		return OutcomeRefusedPrivateAddress
	case ctx.Err() != nil:
		return OutcomeCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return OutcomeTimeout
	case errors.As(err, &dnsErr):
		return OutcomeDNSError
	case errors.Is(err, syscall.ECONNREFUSED):
		return OutcomeConnectionRefused
	case errors.As(err, &certErr), errors.As(err, &recordErr), errors.As(err, &alertError),
		errors.As(err, &opErr) && opErr.Op == "remote error":
		return OutcomeTLSError
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return OutcomeConnectionReset
	default:
		return OutcomeNetworkError
	}
}

// String makes a Result readable in test failures and debug output without the snippet, which
// belongs to the receiver and must not reach logs.
func (r Result) String() string {
	return fmt.Sprintf("%s (status %d, %s, %d-byte snippet, err %v)", r.Outcome, r.StatusCode, r.Duration, len(r.ResponseSnippet), r.Err)
}
