package proxy

import "context"

type exchangeKey struct{}

func contextWithExchange(ctx context.Context, ex uint64) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}
