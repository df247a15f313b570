//go:build tools

// Package tools pins KWOK's main package in this module, so `go mod tidy` keeps what it needs.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
