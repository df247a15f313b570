//go:build tools

// Package tools pins etcdctl's main package in this module, so `go mod tidy` keeps what it needs.
package tools

import _ "go.etcd.io/etcd/etcdctl/v3"
