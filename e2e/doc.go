// Package e2e holds black-box tests that start the real jobbie binary on
// random loopback ports and use it only over HTTP, through the public Go
// client, as a customer would. Set JOBBIE_BIN to a built binary (make e2e
// does); otherwise the suite builds one.
package e2e
