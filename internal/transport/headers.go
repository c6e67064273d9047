package transport

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
)

type headerKey struct{}

// WithHeader returns a context whose requests carry h as extra HTTP headers
// (the Mcp-Param-* headers of a tool call). Transports without headers
// ignore it.
func WithHeader(ctx context.Context, h http.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, headerKey{}, h)
}

func headerFrom(ctx context.Context) http.Header {
	h, _ := ctx.Value(headerKey{}).(http.Header)
	return h
}

// EncodeHeaderValue makes a value safe for an Mcp-Name or Mcp-Param header
// (2026-07-28): plain when it is visible ASCII (space and tab allowed
// inside) and not the sentinel pattern, else "=?base64?...?=" of its UTF-8.
func EncodeHeaderValue(v string) string {
	plain := v == strings.TrimSpace(v) &&
		!(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?="))
	for i := 0; plain && i < len(v); i++ {
		c := v[i]
		if (c < 0x20 && c != '\t') || c > 0x7e {
			plain = false
		}
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}
