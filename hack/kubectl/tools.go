//go:build tools

// Package tools pins kubectl's main package in this module, so `go mod tidy` keeps what it needs.
package tools

import _ "k8s.io/kubernetes/cmd/kubectl"
