package credit_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creditd/creditd/credit"
)

// encodingJSON is what httpapi.Marshal wrote before the views wrote their own JSON.
func encodingJSON(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// awkward are strings encoding/json escapes or rewrites.
var awkward = []string{
	"", "plain", `quote " and backslash \`, "html <b>&amp;</b>", "tab\tnewline\ncr\rbs\bff\f",
	"\x00\x01\x1f\x7f", "ünïcødé ✓ 😀", "line\u2028para\u2029", "bad \xff\xfe utf-8", "\xe2\x80",
	"\u00a0\u200b", "/slash/",
}

func randomString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return awkward[r.IntN(len(awkward))]
	}
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
		if r.IntN(2) == 0 {
			b[i] = byte(' ' + r.IntN(95))
		}
	}
	return string(b)
}

func randomPtr(r *rand.Rand) *string {
	if r.IntN(2) == 0 {
		return nil
	}
	s := randomString(r)
	return &s
}

func randomTime(r *rand.Rand) credit.Timestamp {
	return credit.At(time.UnixMicro(r.Int64N(4e15) - 1e15).In(time.FixedZone("x", 3600*(r.IntN(25)-12))))
}

func randomMoney(r *rand.Rand) credit.Money {
	return credit.Money{Amount: randomString(r), Currency: randomString(r)}
}

func randomCompany(r *rand.Rand) credit.Company {
	c := credit.Company{
		ID: randomString(r), Name: randomString(r), PlatformCompanyGID: randomPtr(r), Status: randomString(r),
		PaymentTerms: randomString(r), CreditLimit: randomMoney(r), Outstanding: randomMoney(r),
		AvailableCredit: randomMoney(r), UpdatedAt: randomTime(r),
	}
	if r.IntN(2) == 0 {
		h := &credit.Hold{Kind: randomString(r), Note: randomPtr(r), PlacedAt: randomTime(r), PlacedBy: randomString(r), PlatformOrderGID: randomPtr(r)}
		if r.IntN(2) == 0 {
			d := randomTime(r)
			h.DueAt = &d
		}
		c.Hold = h
	}
	return c
}

func randomEntry(r *rand.Rand) credit.LedgerEntry {
	return credit.LedgerEntry{ID: randomString(r), CompanyID: randomString(r), Kind: randomString(r), Amount: randomMoney(r), PlatformOrderGID: randomPtr(r), Note: randomPtr(r), OccurredAt: randomTime(r)}
}

// randomEventData is an event's data as stored (compact, HTML escaped by json.Marshal) or in
// another valid form (spaced, HTML unescaped), or nil.
func randomEventData(r *rand.Rand) json.RawMessage {
	if r.IntN(5) == 0 {
		return nil
	}
	v := map[string]any{"object": map[string]any{"id": randomString(r), "note": randomPtr(r), "n": r.IntN(1000)}}
	raw, _ := json.Marshal(v)
	if r.IntN(2) == 0 {
		raw, _ = json.MarshalIndent(v, " ", "\t")
		raw = bytes.ReplaceAll(raw, []byte(`\u003c`), []byte("<"))
	}
	return raw
}

// TestAppendJSONMatchesEncodingJSON holds the hand-written JSON of the views byte-identical
// to encoding/json's, over random values with every kind of awkward string.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	check := func(v any, got []byte) {
		t.Helper()
		if want := encodingJSON(t, v); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON of %#v:\n got %s\nwant %s", v, got, want)
		}
	}
	for range 2000 {
		c := randomCompany(r)
		check(c, c.AppendJSON(nil))
		e := randomEntry(r)
		check(e, e.AppendJSON([]byte{}))
		var page credit.Page[credit.Company]
		if r.IntN(4) > 0 {
			page.Data = []credit.Company{}
			for range r.IntN(4) {
				page.Data = append(page.Data, randomCompany(r))
			}
		}
		page.HasMore = r.IntN(2) == 0
		page.NextCursor = randomPtr(r)
		check(page, page.AppendJSON(nil))
		entries := credit.Page[credit.LedgerEntry]{Data: []credit.LedgerEntry{randomEntry(r), randomEntry(r)}, NextCursor: randomPtr(r)}
		check(entries, entries.AppendJSON(nil))
		ev := credit.Event{ID: randomString(r), Type: credit.EventType(randomString(r)), OccurredAt: randomTime(r), Data: randomEventData(r)}
		check(ev, ev.AppendJSON(nil))
		events := credit.Page[credit.Event]{Data: []credit.Event{ev}, NextCursor: randomPtr(r)}
		check(events, events.AppendJSON(nil))
		// A page of views without their own JSON falls back to encoding/json per item.
		apps := credit.Page[credit.Money]{Data: []credit.Money{randomMoney(r)}}
		check(apps, apps.AppendJSON(nil))
	}
}

// FuzzAppendJSON is TestAppendJSONMatchesEncodingJSON for any strings the fuzzer finds.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		c := credit.Company{ID: a, Name: b, PlatformCompanyGID: &a, Hold: &credit.Hold{Kind: b, Note: &a}}
		if got, want := c.AppendJSON(nil), encodingJSON(t, c); !bytes.Equal(got, want) {
			t.Fatalf("valid UTF-8 %v/%v:\n got %s\nwant %s", utf8.ValidString(a), utf8.ValidString(b), got, want)
		}
		e := credit.LedgerEntry{ID: b, CompanyID: a, Kind: b, Note: &a, PlatformOrderGID: &b}
		if got, want := e.AppendJSON(nil), encodingJSON(t, e); !bytes.Equal(got, want) {
			t.Fatalf("entry, valid UTF-8 %v/%v:\n got %s\nwant %s", utf8.ValidString(a), utf8.ValidString(b), got, want)
		}
		data, _ := json.Marshal(map[string]string{a: b})
		ev := credit.Event{ID: a, Type: credit.EventType(b), Data: data}
		if got, want := ev.AppendJSON(nil), encodingJSON(t, ev); !bytes.Equal(got, want) {
			t.Fatalf("event, valid UTF-8 %v/%v:\n got %s\nwant %s", utf8.ValidString(a), utf8.ValidString(b), got, want)
		}
	})
}
