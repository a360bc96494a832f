package credit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Cursors are opaque to clients: a JSON payload naming the list, its filters and the last
// item's sort key, signed with the store's cursor secret. A tampered cursor, or one minted by
// another store or for another list, fails the signature check and is refused.

// cursorPayload is what a cursor carries.
type cursorPayload struct {
	// List names the list and its fixed filters, e.g. "companies|on_hold|<since>".
	List string `json:"l"`
	// Time is the sort timestamp of the last item, in Unix microseconds, where the list sorts by one.
	Time int64 `json:"t,omitempty"`
	// Name is the last item's name, where the list sorts by name.
	Name string `json:"n,omitempty"`
	// ID is the last item's ID.
	ID string `json:"i,omitempty"`
	// Key is the last item's stored sort key, where the list sorts by one (companyorder.go).
	Key string `json:"k,omitempty"`
	// Seq is the last ledger entry's sequence number.
	Seq int64 `json:"s,omitempty"`
}

const cursorMACBytes = 16

// cursorEncoding is unpadded URL-safe base64 that refuses non-canonical encodings.
var cursorEncoding = base64.RawURLEncoding.Strict()

func encodeCursor(secret []byte, p cursorPayload) string {
	body, _ := json.Marshal(p)
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return cursorEncoding.EncodeToString(body) + "." + cursorEncoding.EncodeToString(mac.Sum(nil)[:cursorMACBytes])
}

// decodeCursor checks a cursor's signature and that it belongs to list.
//
// Errors: invalid_parameter (param "cursor") for a malformed, tampered or foreign cursor.
func decodeCursor(secret []byte, list, cursor string) (cursorPayload, error) {
	p, err := verifyCursor(secret, cursor)
	if err != nil || p.List != list {
		return cursorPayload{}, errBadCursor()
	}
	return p, nil
}

func errBadCursor() error {
	return ParamErrorf(CodeInvalidParameter, "cursor", "cursor is not valid for this list; use next_cursor from the previous page")
}

// verifyCursor checks a cursor's form and signature, whatever list it was issued for.
//
// Errors: invalid_parameter (param "cursor") for a malformed, tampered or foreign cursor.
func verifyCursor(secret []byte, cursor string) (cursorPayload, error) {
	bad := errBadCursor()
	if len(cursor) > 1024 {
		return cursorPayload{}, bad
	}
	bodyPart, macPart, ok := strings.Cut(cursor, ".")
	if !ok {
		return cursorPayload{}, bad
	}
	// Strict: a cursor that differs from the one issued in any character, including the unused low
	// bits of a final base64 character, is refused rather than decoded to the same bytes.
	body, err1 := cursorEncoding.DecodeString(bodyPart)
	sum, err2 := cursorEncoding.DecodeString(macPart)
	if err1 != nil || err2 != nil || len(sum) != cursorMACBytes {
		return cursorPayload{}, bad
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil)[:cursorMACBytes], sum) {
		return cursorPayload{}, bad
	}
	var p cursorPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return cursorPayload{}, bad
	}
	return p, nil
}
