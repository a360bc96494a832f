package credit

import (
	"context"

	"github.com/creditd/creditd/ent"
)

// InTx exposes inTx to the external tests of this package.
func (s *Service) InTx(ctx context.Context, fn func(tx *ent.Tx) error) error { return s.inTx(ctx, fn) }

// QueuedWrites is how many writes wait for the group commit in progress.
func (s *Service) QueuedWrites() int {
	s.commits.mu.Lock()
	defer s.commits.mu.Unlock()
	return len(s.commits.queue)
}
