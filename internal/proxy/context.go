package proxy

import "context"

type exchangeKey struct{}

func contextWithExchange(ctx context.Context, ex uint64) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// ownIDKey holds the id of the request a host's POST carries: the answer
// with that id in the POST's own response is that request's, never a
// stray.
type ownIDKey struct{}

func ownID(ctx context.Context) string {
	id, _ := ctx.Value(ownIDKey{}).(string)
	return id
}
