package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/delivery"
	"github.com/creditd/creditd/demo"
	"github.com/creditd/creditd/webhook"
)

// TestCollectionsMailerRuns runs the mailer of collections.md end to end: a store with a
// reminder schedule and an overdue invoice, a reminder sweep, the invoice.reminder_due
// delivered by the real delivery worker to the Python example listening on loopback, which
// verifies the signature, fetches the statement PDF from the real server and writes an .eml;
// the .eml must carry a PDF whose text names the company and the invoice's amount.
func TestCollectionsMailerRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python3 and a delivery worker")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is required under CI to run the mailer example: apt-get install -y python3")
		}
		t.Skip("no python3 on PATH; the mailer example is not run")
	}
	code := fences(t, "collections.md", "python")
	if len(code) != 1 {
		t.Fatalf("collections.md has %d Python examples, want one (the mailer)", len(code))
	}

	sealer := credittest.NewSealer(t)
	env := credittest.New(t, credittest.Options{ServiceOptions: func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
		o.AllowPrivateWebhooks = true
	}})
	st := env.MustStore(t, "Getränkehandel Süd", "EUR")
	key := env.MustKey(t, st, "mailer", credit.ScopeReadCredit)
	co := env.MustCompany(t, st, "Brauhaus Kessler KG", "8000.00", "NET_14")
	issued := credit.At(env.Clock.Now().Add(-20 * 24 * time.Hour))
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "2950.00", OrderGID: "gid://platform/Order/5003", OccurredAt: &issued})
	if _, err := env.Service.Stores.SetReminderSchedule(credittest.Staff(st), []int{-3, 1, 7, 14, 30}); err != nil {
		t.Fatal(err)
	}

	// The mailer, on a free port of loopback.
	dir := t.TempDir()
	outbox := filepath.Join(dir, "outbox")
	script := filepath.Join(dir, "mailer.py")
	if err := os.WriteFile(script, []byte(code[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	// The endpoint is created first, on a free port, so that its secret can be handed to the mailer.
	we := func(url string) credit.IssuedWebhookSecret {
		w, err := env.Service.Webhooks.CreateEndpoint(credittest.Staff(st), credit.WebhookEndpointInput{URL: url, EventTypes: []string{string(credit.EventTypeInvoiceReminderDue)}})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	port := freePort(t)
	endpoint := we("http://127.0.0.1:" + port + "/creditd")
	mailer := exec.Command(python, script)
	stdout, err := mailer.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	mailer.Stderr = &stderr
	mailer.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PORT=") }),
		"CREDITD_BASE="+env.Server.URL, "CREDITD_KEY="+key, "WEBHOOK_SECRET="+endpoint.Secret, "OUTBOX="+outbox, "PORT="+port)
	if err := mailer.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mailer.Process.Kill(); _ = mailer.Wait() })
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(first) != "listening on "+port {
		t.Fatalf("the mailer printed %q (%v), want listening on %s:\n%s", first, err, port, stderr.String())
	}

	res, err := env.Service.Maintenance.SweepRemindersAsOf(context.Background(), env.Clock.Now())
	if err != nil || res.Reminders != 1 {
		t.Fatalf("reminder sweep: %+v, %v; want one reminder", res, err)
	}

	w := delivery.New(delivery.Config{Queue: env.Service.WebhookQueue, Lock: env.DB.TryLock,
		Client: webhook.NewClient(webhook.Options{AllowPrivate: true}), PollInterval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	var emls []string
	for deadline := time.Now().Add(20 * time.Second); len(emls) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		emls, _ = filepath.Glob(filepath.Join(outbox, "ev_*.eml"))
	}
	if len(emls) != 1 {
		report, _ := env.Service.Webhooks.Deliveries(credittest.Staff(st), endpoint.ID, 10)
		t.Fatalf("the mailer wrote %v, want one .eml; deliveries %+v\n%s", emls, report, stderr.String())
	}
	// A delivery with a signature by another secret is refused, and writes nothing.
	forged, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+"/creditd", strings.NewReader(`{"id":"ev_forged","type":"invoice.reminder_due"}`))
	if err != nil {
		t.Fatal(err)
	}
	forged.Header.Set("webhook-id", "msg_forged")
	forged.Header.Set("webhook-timestamp", strconv.FormatInt(time.Now().Unix(), 10))
	forged.Header.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	resp, err := http.DefaultClient.Do(forged)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if forgedEML, _ := filepath.Glob(filepath.Join(outbox, "ev_forged*")); resp.StatusCode != http.StatusBadRequest || len(forgedEML) > 0 {
		t.Errorf("the mailer answered a forged delivery %d and wrote %v, want 400 and nothing", resp.StatusCode, forgedEML)
	}
	f, err := os.Open(emls[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msg, err := mail.ReadMessage(f)
	if err != nil {
		t.Fatal(err)
	}
	if subject := msg.Header.Get("Subject"); subject != "Reminder 2: order 5003 is overdue" {
		t.Errorf("Subject %q", subject)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/mixed" {
		t.Fatalf("Content-Type %q (%v), want multipart/mixed", msg.Header.Get("Content-Type"), err)
	}
	var pdf []byte
	var text string
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(part)
		if err != nil {
			t.Fatal(err)
		}
		decoded := decodePart(t, part.Header.Get("Content-Transfer-Encoding"), body)
		switch ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type")); ct {
		case "application/pdf":
			pdf = decoded
		case "text/plain":
			text = string(decoded)
		}
	}
	if !strings.Contains(text, "Dear Brauhaus Kessler KG") || !strings.Contains(text, "2950.00 EUR") || !strings.Contains(text, "are 6 days overdue") {
		t.Errorf("the e-mail's text does not name the company and the amount:\n%s", text)
	}
	if !strings.HasPrefix(string(pdf), "%PDF-") {
		t.Fatalf("no PDF attached (%d bytes)", len(pdf))
	}
	pdfText := credittest.PDFText(t, pdf)
	for _, want := range []string{"Brauhaus Kessler KG", "2,950.00"} {
		if !strings.Contains(pdfText, want) && !strings.Contains(pdfText, strings.NewReplacer(",", ".", ".", ",").Replace(want)) {
			t.Errorf("the attached statement does not name %q:\n%s", want, pdfText)
		}
	}
}

// decodePart undoes a MIME part's transfer encoding (Python's email writes base64 for the
// PDF, and 7bit or quoted-printable for the text).
func decodePart(t *testing.T, encoding string, body []byte) []byte {
	t.Helper()
	switch strings.ToLower(encoding) {
	case "base64":
		out, err := io.ReadAll(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(bytes.Join(bytes.Fields(body), nil))))
		if err != nil {
			t.Fatal(err)
		}
		return out
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return body
}

// TestCollectionsJSONExamples compares the promise and the dispute collections.md shows with
// the ones a real invoice carries after the guide's requests with the demo's full-access key:
// the same members in the same order, of the same JSON types, and the same texts.
func TestCollectionsJSONExamples(t *testing.T) {
	env := credittest.New(t)
	d, _, err := demo.Seed(context.Background(), env.Service)
	if err != nil {
		t.Fatal(err)
	}
	var full string
	for _, k := range d.Keys {
		if slices.Contains(k.Scopes, credit.ScopeWriteCredit) {
			full = k.Secret
		}
	}
	var companies credit.Page[credit.Company]
	env.Get(t, full, "/v1/companies?limit=250").WantStatus(t, 200).Decode(t, &companies)
	var inv string
	for _, c := range companies.Data {
		if c.Name == "Brauhaus Kessler KG" {
			var invoices credit.Page[credit.Invoice]
			env.Get(t, full, "/v1/companies/"+c.ID+"/invoices?status=open").WantStatus(t, 200).Decode(t, &invoices)
			inv = invoices.Data[0].ID
		}
	}
	examples := fences(t, "collections.md", "json")
	if len(examples) != 2 {
		t.Fatalf("collections.md has %d JSON examples, want 2 (a promise and a dispute)", len(examples))
	}
	raw, err := os.ReadFile("collections.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(raw)
	note := regexp.MustCompile(`"note\\": \\"([^\\]*)\\"`).FindStringSubmatch(guide)
	reason := regexp.MustCompile(`-d '\{"reason": "([^"]*)"\}'`).FindStringSubmatch(guide)
	if note == nil || reason == nil {
		t.Fatal("collections.md's curl lines send no note or no reason")
	}
	day := env.Clock.Now().AddDate(0, 0, 7).Format(time.DateOnly)
	promise := env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + inv + "/promise", Key: full,
		Body: map[string]any{"promised_for": day, "note": note[1]}}).WantStatus(t, 200)
	dispute := env.Do(t, credittest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + inv + "/dispute", Key: full,
		Body: map[string]any{"reason": reason[1]}}).WantStatus(t, 200)
	var p, q struct {
		Invoice struct {
			Promise, Dispute json.RawMessage
		}
	}
	promise.Decode(t, &p)
	dispute.Decode(t, &q)
	for i, real := range []json.RawMessage{p.Invoice.Promise, q.Invoice.Dispute} {
		documented := []byte(examples[i])
		if got, want := jsonShape(t, documented), jsonShape(t, real); got != want {
			t.Errorf("JSON example %d has the shape\n%s\nwhere the real one has\n%s\n(%s)", i+1, got, want, real)
		}
		var doc, r map[string]any
		_ = json.Unmarshal(documented, &doc)
		_ = json.Unmarshal(real, &r)
		for _, k := range []string{"note", "recorded_by", "reason", "opened_by", "broken_at"} {
			if v, ok := doc[k]; ok && v != r[k] {
				t.Errorf("JSON example %d: %s is %v, real %v", i+1, k, v, r[k])
			}
		}
		for _, k := range []string{"recorded_at", "opened_at"} {
			if v, ok := doc[k].(string); ok && !timestamp.MatchString(v) {
				t.Errorf("JSON example %d: %s %q is not a timestamp as the API writes them", i+1, k, v)
			}
		}
	}
}

// freePort is a TCP port of loopback that nothing listens on at the moment.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
