package graph

import (
	"context"
	"sync"

	"github.com/creditd/creditd/credit"
)

// Batched loads of the companies' ledgers and timelines, so that a dashboard query for a page
// of companies with their latest entries runs a fixed number of SQL queries, not one set per
// company.
//
// A dataloader library batches by waiting a few milliseconds for calls to pile up; on a busy
// machine a slow goroutine misses the window and the query count varies with timing. Here the
// batch is known exactly: the companies of one page. When the first company of a page asks
// for its ledger, the ledgers of the whole page are read at once (credit.Ledger.FirstPages)
// and its siblings pick theirs from that result. Nothing waits on a timer and nothing is
// cached beyond the page it belongs to, so a mutation's payload never sees a stale ledger.

// loaders is one request's batches. Its zero value is not usable; see newLoaders.
type loaders struct {
	svc Services

	mu           sync.Mutex
	siblings     map[*credit.Company]*siblings
	ledgers      map[batchKey]*batch[credit.LedgerEntry]
	timelines    map[batchKey]*batch[credit.TimelineEvent]
	invoicePages map[batchKey]*batch[credit.Invoice]
	agings       map[figureKey]*figureBatch[credit.Aging]
	behaviours   map[figureKey]*figureBatch[credit.PaymentBehaviour]
	// stores are the store's payment figures by window, read once per request and window
	// whichever of Receivables' fields asks first.
	stores map[int]*storeFigures
	// shown are the companies the request has already read, by ID, for LedgerEntry.company:
	// an entry listed in a company's ledger or returned beside its company by a mutation
	// names a company the request holds, so no entry of a dashboard costs a query. A mutation
	// payload records its company after the write, so a later payload never sees an older one.
	shown map[string]*credit.Company
	// events are the pages of events the request listed, by the address of each event, for
	// Event.company: the companies of a whole page are read at once.
	events map[*credit.Event]*eventCompanies
}

// eventCompanies are the live companies of one page of events, read by whichever event asks
// first.
type eventCompanies struct {
	events    []credit.Event
	once      sync.Once
	companies map[string]credit.Company
	err       error
}

// figureKey is one batch of a per-company figure: a page of companies and the figure's argument
// (payment behaviour's window; 0 for the aging, which takes none).
type figureKey struct {
	page *siblings
	arg  int
}

// figureBatch is a figure of each company of a page (its aging, its payment behaviour), read by
// whichever sibling asks first.
type figureBatch[T any] struct {
	once   sync.Once
	values map[string]T
	err    error
}

// siblings are the companies of one page, in page order.
type siblings struct {
	ids       []string
	companies []*credit.Company
}

// batchKey identifies one batched read: a page of companies, the page size asked for and the
// list's filter (an invoice status; empty for the others).
type batchKey struct {
	page   *siblings
	first  int
	filter string
}

// batch is one read for a whole page of companies, run by whichever sibling asks first.
type batch[T any] struct {
	once  sync.Once
	pages map[string]credit.Page[T]
	err   error
}

func newLoaders(svc Services) *loaders {
	return &loaders{
		svc:          svc,
		siblings:     map[*credit.Company]*siblings{},
		ledgers:      map[batchKey]*batch[credit.LedgerEntry]{},
		timelines:    map[batchKey]*batch[credit.TimelineEvent]{},
		invoicePages: map[batchKey]*batch[credit.Invoice]{},
		agings:       map[figureKey]*figureBatch[credit.Aging]{},
		behaviours:   map[figureKey]*figureBatch[credit.PaymentBehaviour]{},
		stores:       map[int]*storeFigures{},
		shown:        map[string]*credit.Company{},
		events:       map[*credit.Event]*eventCompanies{},
	}
}

type loadersKey struct{}

func withLoaders(ctx context.Context, l *loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// loadersFrom returns the request's loaders, or nil, which loads nothing in batches.
func loadersFrom(ctx context.Context) *loaders {
	l, _ := ctx.Value(loadersKey{}).(*loaders)
	return l
}

// addSiblings records the companies of one page as one batch. Companies are told apart by
// address: the edges of the page point into the same slice (see edges).
func (l *loaders) addSiblings(page []credit.Company) {
	if l == nil || len(page) == 0 {
		return
	}
	s := &siblings{ids: make([]string, len(page)), companies: make([]*credit.Company, len(page))}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range page {
		s.ids[i] = page[i].ID
		s.companies[i] = &page[i]
		l.siblings[&page[i]] = s
	}
}

// showCompany records that the request has read c, for companyOf.
func (l *loaders) showCompany(c *credit.Company) {
	if l == nil || c == nil {
		return
	}
	l.mu.Lock()
	l.shown[c.ID] = c
	l.mu.Unlock()
}

// companyOf returns the company of a ledger entry: the one the request read it under, else
// read on its own (an entry fetched by node(id:)).
func (l *loaders) companyOf(ctx context.Context, svc Services, e *credit.LedgerEntry) (*credit.Company, error) {
	if l != nil {
		l.mu.Lock()
		c := l.shown[e.CompanyID]
		l.mu.Unlock()
		if c != nil {
			return c, nil
		}
	}
	c, err := svc.Companies.Get(ctx, e.CompanyID)
	if err != nil {
		return nil, err
	}
	l.showCompany(&c)
	return &c, nil
}

// addEvents records one page of events as one batch for eventCompany. Events are told apart
// by address: the edges of the page point into the same slice (see edges).
func (l *loaders) addEvents(page []credit.Event) {
	if l == nil || len(page) == 0 {
		return
	}
	b := &eventCompanies{events: page}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range page {
		l.events[&page[i]] = b
	}
}

// eventCompany returns the live company an event concerns, or nil for an event that concerns
// none (application and key events). The companies of the event's page are read in one query
// when the first of them is asked for; an event on its own (node(id:)) reads its company alone.
//
// Errors: Companies.GetMany's and Companies.Get's (not_found for a company the key cannot see).
func (l *loaders) eventCompany(ctx context.Context, svc Services, e *credit.Event) (*credit.Company, error) {
	id, err := e.CompanyID()
	if err != nil || id == "" {
		return nil, err
	}
	var b *eventCompanies
	if l != nil {
		l.mu.Lock()
		b = l.events[e]
		l.mu.Unlock()
	}
	if b != nil {
		b.once.Do(func() {
			companyIDs := make([]string, 0, len(b.events))
			for i := range b.events {
				if id, err := b.events[i].CompanyID(); err == nil && id != "" {
					companyIDs = append(companyIDs, id)
				}
			}
			b.companies, b.err = svc.Companies.GetMany(ctx, companyIDs)
		})
		if b.err != nil {
			return nil, b.err
		}
		if c, ok := b.companies[id]; ok {
			return &c, nil
		}
	}
	c, err := svc.Companies.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// ledger returns the first page of c's ledger from its page's batch, or read on its own when c
// was not listed in a page (a single company, a mutation's payload). batched is false when the
// company was not found, so that the caller can ask ListLedger for the not_found answer.
func (l *loaders) ledger(ctx context.Context, c *credit.Company, first *int) (p credit.Page[credit.LedgerEntry], batched bool, err error) {
	if l == nil {
		return p, false, nil
	}
	// A page's companies were just read with their last sequence numbers: the batch reads only
	// the entries (credit.Ledger.FirstPagesOf).
	return load(l, l.ledgers, ctx, c, first, "", l.svc.Ledger.FirstPages, l.svc.Ledger.FirstPagesOf)
}

// timeline is ledger for the timeline.
func (l *loaders) timeline(ctx context.Context, c *credit.Company, first *int) (p credit.Page[credit.TimelineEvent], batched bool, err error) {
	if l == nil {
		return p, false, nil
	}
	return load(l, l.timelines, ctx, c, first, "", l.svc.Timeline.FirstPages, nil)
}

// invoices is ledger for the invoices with a status filter.
func (l *loaders) invoices(ctx context.Context, c *credit.Company, first *int, status string) (p credit.Page[credit.Invoice], batched bool, err error) {
	if l == nil {
		return p, false, nil
	}
	read := func(ctx context.Context, companyIDs []string, limit *int) (map[string]credit.Page[credit.Invoice], error) {
		return l.svc.Invoices.FirstPages(ctx, companyIDs, status, limit)
	}
	return load(l, l.invoicePages, ctx, c, first, status, read, nil)
}

// aging returns c's aging, read with its page's siblings' in one statement. found is false
// when the company is not in the viewer's store.
func (l *loaders) aging(ctx context.Context, svc Services, c *credit.Company) (credit.Aging, bool, error) {
	return loadFigure(l, func(l *loaders) map[figureKey]*figureBatch[credit.Aging] { return l.agings }, ctx, c, 0, svc.Reports.CompanyAging)
}

// loadFigure returns c's value of a per-company figure with argument arg, read by read with its
// page's siblings' (the batches pick returns, one per page and argument) or on its own when c
// was not listed in a page. found is false when the company is not in the viewer's store.
func loadFigure[T any](l *loaders, pick func(*loaders) map[figureKey]*figureBatch[T], ctx context.Context, c *credit.Company, arg int,
	read func(ctx context.Context, companyIDs []string) (map[string]T, error),
) (v T, found bool, err error) {
	var s *siblings
	if l != nil {
		l.mu.Lock()
		s = l.siblings[c]
		l.mu.Unlock()
	}
	if s == nil {
		values, err := read(ctx, []string{c.ID})
		v, found = values[c.ID]
		return v, found, err
	}
	key := figureKey{page: s, arg: arg}
	l.mu.Lock()
	batches := pick(l)
	b := batches[key]
	if b == nil {
		b = &figureBatch[T]{}
		batches[key] = b
	}
	l.mu.Unlock()
	b.once.Do(func() { b.values, b.err = read(ctx, s.ids) })
	v, found = b.values[c.ID]
	return v, found, b.err
}

func load[T any](l *loaders, batches map[batchKey]*batch[T], ctx context.Context, c *credit.Company, first *int, filter string,
	read func(ctx context.Context, companyIDs []string, limit *int) (map[string]credit.Page[T], error),
	readPage func(ctx context.Context, companies []*credit.Company, limit *int) (map[string]credit.Page[T], error),
) (credit.Page[T], bool, error) {
	l.mu.Lock()
	s := l.siblings[c]
	if s == nil {
		// A company on its own is a batch of one, never cached: after a mutation the same
		// company may be shown again, changed. The batched read also sees the writes of the
		// transaction an Idempotency-Key runs the request in.
		l.mu.Unlock()
		pages, err := read(ctx, []string{c.ID}, first)
		if err != nil {
			return credit.Page[T]{}, false, err
		}
		p, ok := pages[c.ID]
		return p, ok, nil
	}
	key := batchKey{page: s, first: -1, filter: filter}
	if first != nil {
		key.first = *first
	}
	b := batches[key]
	if b == nil {
		b = &batch[T]{}
		batches[key] = b
	}
	l.mu.Unlock()
	b.once.Do(func() {
		if readPage != nil {
			b.pages, b.err = readPage(ctx, s.companies, first)
		} else {
			b.pages, b.err = read(ctx, s.ids, first)
		}
	})
	if b.err != nil {
		return credit.Page[T]{}, false, b.err
	}
	p, ok := b.pages[c.ID]
	return p, ok, nil
}

// paymentBehaviour returns c's payment behaviour over window days, read with its page's
// siblings' for the same window in a constant number of statements. found is false when the
// company is not in the viewer's store.
func (l *loaders) paymentBehaviour(ctx context.Context, svc Services, c *credit.Company, window int) (credit.PaymentBehaviour, bool, error) {
	pick := func(l *loaders) map[figureKey]*figureBatch[credit.PaymentBehaviour] { return l.behaviours }
	return loadFigure(l, pick, ctx, c, window, func(ctx context.Context, ids []string) (map[string]credit.PaymentBehaviour, error) {
		return svc.Reports.PaymentBehaviour(ctx, ids, window)
	})
}

// storeFigures is one read of the store's payment figures.
type storeFigures struct {
	once sync.Once
	b    credit.StoreBehaviour
	err  error
}

// storeBehaviour returns the store's payment figures over window days, read once per request
// and window (Receivables' three fields share them).
func (l *loaders) storeBehaviour(ctx context.Context, svc Services, window int) (credit.StoreBehaviour, error) {
	if l == nil {
		return svc.Reports.StoreBehaviour(ctx, window)
	}
	l.mu.Lock()
	f := l.stores[window]
	if f == nil {
		f = &storeFigures{}
		l.stores[window] = f
	}
	l.mu.Unlock()
	f.once.Do(func() { f.b, f.err = svc.Reports.StoreBehaviour(ctx, window) })
	return f.b, f.err
}
