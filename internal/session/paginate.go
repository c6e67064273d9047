package session

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// The pagination rule, the one every listing of mcpi follows (tools,
// resources, templates, prompts, tasks, skills, and mcpi check's lists):
//
//   - a listing reads at most MaxPages pages (Options.MaxPages, default
//     DefaultMaxPages): a server whose cursors never end cannot keep a
//     caller forever;
//   - the cursors it was given are remembered, to find one given twice,
//     as a digest of cursorDigest bytes each, never the cursor itself, so
//     that the memory is bounded in bytes too (DefaultMaxPages digests:
//     320,000 bytes) whatever the size of a server's cursors;
//   - a listing that stops before its end returns what it listed with a
//     *TruncatedError that says why: the cap, or a cursor repeated. It is
//     never passed off as the whole list, and never as a JSON-RPC error
//     the server did not send.

// DefaultMaxPages is how many pages one listing reads at most.
const DefaultMaxPages = 10000

// cursorDigest is the size of what is remembered of each cursor.
const cursorDigest = sha256.Size

// ErrTruncated is matched by errors.Is when a listing stopped before its
// end.
var ErrTruncated = errors.New("the listing is incomplete")

// TruncatedError says why a listing stopped before its end. The items read
// until then are returned with it.
type TruncatedError struct {
	Method string
	Pages  int // pages read
	Items  int // items listed
	// MaxPages is the cap that was reached, when it was the cap.
	MaxPages int
	// Repeated is the cursor the server gave a second time, when it did:
	// following it would list the same pages again, forever.
	Repeated string
	// Budget is the refusal of the listing's budget.
	Budget *bounds.ExceededError
}

func (e *TruncatedError) Error() string {
	if e.Repeated != "" {
		return fmt.Sprintf("%s: the listing is incomplete: after %d page(s) the server repeated cursor %q, which leads back to a page already listed; stopped with %d item(s)",
			e.Method, e.Pages, bounds.ClipTo(e.Repeated, 120), e.Items)
	}
	return fmt.Sprintf("%s: the listing is incomplete: the server still gave a next cursor after %d pages, the most one listing reads; stopped with %d item(s)",
		e.Method, e.Pages, e.Items)
}

// Is makes errors.Is(err, ErrTruncated) true.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// Unwrap returns the budget's refusal, when the cap was hit.
func (e *TruncatedError) Unwrap() error {
	if e.Budget == nil {
		return nil
	}
	return e.Budget
}

// Paginate follows nextCursor from the first page (cursor "") until a page
// has none, under the pagination rule: at most maxPages pages (0 or less:
// DefaultMaxPages), no cursor followed twice. page fetches one page. A
// page's error ends the listing and is returned with the items before it;
// a listing cut short returns its items with a *TruncatedError.
func Paginate[T any](ctx context.Context, method string, maxPages int, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	// One item per page, of the digest of the cursor that asked for it.
	budget := bounds.NewBudget("listing pages", maxPages, int64(maxPages)*cursorDigest)
	seen := map[[cursorDigest]byte]bool{}
	var all []T
	cursor := ""
	for pages := 0; ; pages++ {
		if err := budget.Take(cursorDigest); err != nil {
			var ee *bounds.ExceededError
			errors.As(err, &ee)
			return all, &TruncatedError{Method: method, Pages: pages, Items: len(all), MaxPages: maxPages, Budget: ee}
		}
		items, next, err := page(ctx, cursor)
		if err != nil {
			return all, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		sum := sha256.Sum256([]byte(next))
		if seen[sum] {
			return all, &TruncatedError{Method: method, Pages: pages + 1, Items: len(all), Repeated: next}
		}
		seen[sum] = true
		cursor = next
	}
}

// maxPages is the page cap of this client's listings.
func (c *Client) maxPages() int {
	if c.opts.MaxPages > 0 {
		return c.opts.MaxPages
	}
	return DefaultMaxPages
}

// MaxPages returns how many pages one listing reads at most.
func (c *Client) MaxPages() int { return c.maxPages() }
