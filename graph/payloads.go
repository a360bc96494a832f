package graph

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"

	"github.com/creditd/creditd/tenant"
)

// Shared payloads (issue 40). The subscribers of one store that run the same document
// (operation text and name) with the same variables under the same scopes would each execute
// their selection for every event and get the same bytes: the first of them to send event E
// executes it, the others take its bytes. Only what decides the bytes is shared: the key of a
// group is the store, the viewer's kind and scopes (read_applications, the personal-data
// permission, among them), the operation's text, name and variables (so its types and
// afterEvent too); a payload with errors or extensions is never shared (each subscriber then
// executes its own). Each subscriber still confirms its own key before each of its messages
// (stream.pump), so a revoked one sends nothing more whatever the others do. A payload of event
// E is executed after E was committed, as each subscriber's own would be; a subscriber's later
// events are executed later still, so the records a subscriber sees never go back in time.
//
// The payloads a group keeps are few and short-lived: one is dropped once every member has
// passed its event (each member of a group takes the same events, those after its own
// position), and a group keeps at most maxSharedPayloads (the oldest go first; a member that
// lags further executes its own). A member holds one small struct; a group lives while it has
// members.

// maxSharedPayloads is the most payloads a group keeps: a member further behind than that
// executes its own.
const maxSharedPayloads = 32

// payloadKey is what decides a subscription message's bytes, apart from its event.
type payloadKey struct {
	store     string
	actor     string
	scopes    string // sorted, space-separated
	query     string
	operation string
	variables string // JSON, its members sorted
}

// payloadGroups are the groups of a handler's subscriptions, by key.
type payloadGroups struct {
	mu     sync.Mutex
	groups map[payloadKey]*payloadGroup

	// executed counts the payloads executed by a member (shared or not).
	executed atomic.Int64
}

// payloadGroup is the subscriptions of one key and the payloads of its recent events.
type payloadGroup struct {
	groups *payloadGroups
	key    payloadKey

	mu       sync.Mutex
	members  []*payloadMember
	payloads []*sharedPayload // by seq, ascending
}

// sharedPayload is one event's payload: bytes once done is closed (nil when it may not be
// shared: each member then executes its own).
type sharedPayload struct {
	seq   int64
	done  chan struct{}
	bytes []byte
}

// payloadMember is one subscription of a group.
type payloadMember struct {
	g *payloadGroup
	// pos is the seq of the last event the member sent, or the position its subscription
	// started after: it needs no payload of an event at or before it.
	pos int64
}

// SubscriptionPayloadsExecuted counts the payloads of subscription messages (over
// graphql-transport-ws) that were executed: each message whose payload was not executed
// reused one of another subscriber of its group.
func (h *Handler) SubscriptionPayloadsExecuted() int64 { return h.payloads.executed.Load() }

// join adds the subscription of ctx (the operation oc of a viewer's stream), which starts after
// the event start, to its group; nil when its payloads cannot be shared (no viewer, variables
// that do not encode).
func (gs *payloadGroups) join(ctx context.Context, oc *graphql.OperationContext, start int64) *payloadMember {
	v, ok := tenant.FromContext(ctx)
	if !ok || v.StoreID == "" || v.IsSystem() || oc == nil {
		return nil
	}
	vars, err := json.Marshal(oc.Variables)
	if err != nil {
		return nil
	}
	scopes := slices.Clone(v.Scopes)
	slices.Sort(scopes)
	key := payloadKey{store: v.StoreID, actor: v.ActorType, scopes: strings.Join(scopes, " "),
		query: oc.RawQuery, operation: oc.OperationName, variables: string(vars)}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.groups[key]
	if g == nil {
		if gs.groups == nil {
			gs.groups = map[payloadKey]*payloadGroup{}
		}
		g = &payloadGroup{groups: gs, key: key}
		gs.groups[key] = g
	}
	m := &payloadMember{g: g, pos: start}
	g.mu.Lock()
	g.members = append(g.members, m)
	g.mu.Unlock()
	return m
}

// leave removes m from its group; the last member's leaving drops the group.
func (m *payloadMember) leave() {
	if m == nil {
		return
	}
	g := m.g
	g.groups.mu.Lock()
	defer g.groups.mu.Unlock()
	g.mu.Lock()
	if i := slices.Index(g.members, m); i >= 0 {
		last := len(g.members) - 1
		g.members[i], g.members[last] = g.members[last], nil
		g.members = g.members[:last]
	}
	empty := len(g.members) == 0
	if !empty {
		g.prune()
	}
	g.mu.Unlock()
	if empty && g.groups.groups[g.key] == g {
		delete(g.groups.groups, g.key)
	}
}

// payload returns the payload of the event seq: another member's, or else the one execute
// returns (nil ends the stream). shareable reports whether execute's payload may serve the
// other members. A nil m executes.
func (m *payloadMember) payload(ctx context.Context, seq int64, execute func() (payload []byte, shareable bool)) []byte {
	if m == nil {
		b, _ := execute()
		return b
	}
	g := m.g
	g.mu.Lock()
	i, found := slices.BinarySearchFunc(g.payloads, seq, func(p *sharedPayload, seq int64) int { return cmp.Compare(p.seq, seq) })
	if found {
		p := g.payloads[i]
		g.mu.Unlock()
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil
		}
		if p.bytes != nil {
			m.passed(seq)
			return p.bytes
		}
		b, _ := execute() // the member that executed it could not share it
		m.passed(seq)
		return b
	}
	p := &sharedPayload{seq: seq, done: make(chan struct{})}
	g.payloads = slices.Insert(g.payloads, i, p)
	g.mu.Unlock()

	b, shareable := execute()
	g.mu.Lock()
	if shareable && b != nil {
		p.bytes = b
	} else if i := slices.Index(g.payloads, p); i >= 0 {
		g.payloads = slices.Delete(g.payloads, i, i+1)
	}
	close(p.done)
	g.mu.Unlock()
	m.passed(seq)
	return b
}

// passed records that m sent the event seq, and drops the payloads no member needs.
func (m *payloadMember) passed(seq int64) {
	g := m.g
	g.mu.Lock()
	if seq > m.pos {
		m.pos = seq
	}
	if len(g.payloads) > 0 && g.payloads[0].seq <= seq {
		// m's passing may have let the oldest go.
		g.prune()
	}
	g.mu.Unlock()
}

// prune drops the payloads of the events every member has passed, and the oldest done ones
// beyond maxSharedPayloads; g.mu is held.
func (g *payloadGroup) prune() {
	if len(g.payloads) == 0 || len(g.members) == 0 {
		return
	}
	low := g.members[0].pos
	for _, m := range g.members[1:] {
		low = min(low, m.pos)
	}
	keep := g.payloads[:0]
	over := len(g.payloads) - maxSharedPayloads
	for _, p := range g.payloads {
		done := isClosed(p.done)
		if done && (p.seq <= low || over > 0) {
			over--
			continue
		}
		keep = append(keep, p)
	}
	clear(g.payloads[len(keep):])
	g.payloads = keep
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// shareableResponse reports whether resp's bytes depend on nothing but the group's key and
// the event: no errors (a read that failed, a field the key may not read), no extensions,
// no incremental parts.
func shareableResponse(resp *graphql.Response) bool {
	return len(resp.Errors) == 0 && len(resp.Extensions) == 0 && resp.HasNext == nil &&
		resp.Label == "" && resp.Path == nil
}
