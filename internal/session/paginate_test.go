package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPaginateRule: a listing stops at its page cap or at a repeated
// cursor with a *TruncatedError and the items read so far, never with an
// error code the server did not send; cursors are remembered as digests,
// so huge ones cost no more than small ones.
func TestPaginateRule(t *testing.T) {
	endless := func(big int) func(context.Context, string) ([]int, string, error) {
		n := 0
		return func(_ context.Context, cursor string) ([]int, string, error) {
			n++
			return []int{n}, fmt.Sprintf("%d%s", n, strings.Repeat("x", big)), nil
		}
	}
	items, err := Paginate(context.Background(), "tools/list", 7, endless(1<<20))
	var te *TruncatedError
	if len(items) != 7 || !errors.As(err, &te) || te.MaxPages != 7 || te.Pages != 7 || !errors.Is(err, ErrTruncated) {
		t.Fatalf("endless: %d items, %v", len(items), err)
	}
	if errors.As(err, new(*RPCError)) {
		t.Errorf("a truncation is not the server's error: %v", err)
	}
	cycle := []string{"a", "b", "a"}
	i := 0
	items, err = Paginate(context.Background(), "prompts/list", 0, func(_ context.Context, cursor string) ([]int, string, error) {
		next := cycle[i]
		i++
		return []int{i}, next, nil
	})
	if len(items) != 3 || !errors.As(err, &te) || te.Repeated != "a" || te.Pages != 3 ||
		err.Error() != `prompts/list: the listing is incomplete: after 3 page(s) the server repeated cursor "a", which leads back to a page already listed; stopped with 3 item(s)` {
		t.Fatalf("cycle: %d items, %v", len(items), err)
	}
	items, err = Paginate(context.Background(), "tools/list", 0, func(_ context.Context, cursor string) ([]int, string, error) {
		if cursor == "" {
			return []int{1}, "2", nil
		}
		return []int{2}, "", nil
	})
	if len(items) != 2 || err != nil {
		t.Fatalf("two pages: %v %v", items, err)
	}
}
