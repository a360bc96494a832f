package httpapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/creditd/creditd/credit"
)

// CodeNotAcceptable refuses a request whose Accept header admits none of the media types the
// route can answer with (contract §17: the statement of account is JSON or PDF).
const CodeNotAcceptable credit.Code = "not_acceptable"

// Negotiate picks, of the media types a route offers (its default first), the one r's Accept
// header prefers: by q-value, then by how specifically a range names the type (the type itself
// beats type/*, which beats */*), then by the order of offers. No Accept header takes the
// default.
//
// Errors: not_acceptable when the header admits none of offers (each has q=0 or matches no
// range).
func Negotiate(r *http.Request, offers ...string) (string, error) {
	header := r.Header.Values("Accept")
	if len(header) == 0 {
		return offers[0], nil
	}
	best, bestQ, bestSpec := "", 0.0, -1
	for _, offer := range offers {
		q, spec := acceptance(header, offer)
		if q > bestQ || (q == bestQ && q > 0 && spec > bestSpec) {
			best, bestQ, bestSpec = offer, q, spec
		}
	}
	if best == "" {
		return "", credit.Errorf(CodeNotAcceptable, "Accept admits none of the media types this route answers with: %s", strings.Join(offers, ", "))
	}
	return best, nil
}

// acceptance is how Accept takes mediaType: the q-value of the most specific range that
// matches it, and that range's specificity (2 the type itself, 1 type/*, 0 */*, -1 none).
// A header that cannot be read admits nothing through the parts it cannot read.
func acceptance(header []string, mediaType string) (float64, int) {
	q, specificity := 0.0, -1
	typ, _, _ := strings.Cut(mediaType, "/")
	for _, line := range header {
		for _, part := range strings.Split(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			s := -1
			switch mt {
			case mediaType:
				s = 2
			case typ + "/*":
				s = 1
			case "*/*":
				s = 0
			}
			if s <= specificity {
				continue
			}
			v := 1.0
			if p, ok := params["q"]; ok {
				if v, err = strconv.ParseFloat(p, 64); err != nil || v < 0 || v > 1 {
					continue
				}
			}
			q, specificity = v, s
		}
	}
	return q, specificity
}
