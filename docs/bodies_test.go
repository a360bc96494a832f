package docs_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// exampleBody finds, in a fenced block, the start of a body that shows a ledger entry or an
// event: a line opening a JSON object whose id is a real-looking le_ or ev_ ID (a schematic
// "ev_…" is prose, not a body).
var exampleBody = regexp.MustCompile(`(?m)^\{"id":\s*"(le|ev)_[0-9A-Za-z]+"`)

// TestExampleBodiesMatchRealResponses holds every example body of README.md and the guides
// that shows a ledger entry or an event to a real response of the same kind: the same members,
// in the same order, with values of the same JSON types, down to the nested objects. So an
// example cannot show a member that is never sent (webhooks.md once showed company_id before
// the service sent it) nor miss one that is.
func TestExampleBodiesMatchRealResponses(t *testing.T) {
	env := credittest.New(t)
	st := env.MustStore(t, "Docs", "EUR")
	key := env.MustKey(t, st, "docs", credit.ScopeReadCredit)
	co := env.MustCompany(t, st, "Brauhaus Kessler KG", "8000.00")
	env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "250.00", OrderGID: "gid://platform/Order/5004"})
	var ledger, events struct{ Data []json.RawMessage }
	env.Get(t, key, "/v1/companies/"+co.ID+"/ledger").WantStatus(t, 200).Decode(t, &ledger)
	env.Get(t, key, "/v1/events?type=ledger_entry.created").WantStatus(t, 200).Decode(t, &events)
	real := map[string][]byte{"le": ledger.Data[0], "ev ledger_entry.created": events.Data[0]}

	files, _ := filepath.Glob("*.md")
	files = append(files, filepath.Join("..", "README.md"))
	checked := 0
	for _, file := range files {
		if file == "contract.md" || file == "specification.md" {
			continue // schematic shapes, not bodies
		}
		for _, block := range fences(t, file, anyLanguage) {
			for _, loc := range exampleBody.FindAllStringSubmatchIndex(block, -1) {
				var example json.RawMessage
				if err := json.NewDecoder(strings.NewReader(block[loc[0]:])).Decode(&example); err != nil {
					t.Errorf("%s: an example body that is not complete JSON (%v):\n%s", file, err, block[loc[0]:])
					continue
				}
				kind := block[loc[2]:loc[3]]
				if kind == "ev" {
					var ev struct{ Type string }
					_ = json.Unmarshal(example, &ev)
					kind += " " + ev.Type
				}
				want, ok := real[kind]
				if !ok {
					t.Errorf("%s: an example body of %q, which this test has no real response of: add one", file, kind)
					continue
				}
				if got, want := jsonShape(t, example), jsonShape(t, want); got != want {
					t.Errorf("%s: example body\n%s\nhas the shape\n%s\nwhere a real one has\n%s\n(%s)", file, example, got, want, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no example body to check: the pattern no longer finds them")
	}
}

// jsonShape is a JSON value with every scalar replaced by its type, members kept in order.
func jsonShape(t *testing.T, raw []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	var b strings.Builder
	inObject := []bool{}
	expectKey := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			b.WriteString(v.String())
			switch v {
			case '{', '[':
				inObject = append(inObject, v == '{')
				expectKey = v == '{'
				continue
			default:
				inObject = inObject[:len(inObject)-1]
			}
		case string:
			if expectKey {
				b.WriteString(v + ":")
				expectKey = false
				continue
			}
			b.WriteString("string")
		case nil:
			b.WriteString("null")
		case bool:
			b.WriteString("bool")
		case float64:
			b.WriteString("number")
		}
		if len(inObject) > 0 {
			b.WriteString(" ")
			expectKey = inObject[len(inObject)-1]
		}
	}
}
