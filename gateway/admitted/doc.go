// Package admitted is the vocabulary of an admitted request, which the
// gateway's parts hand one another: who calls and in which namespace,
// what a custom role lets it touch (both found by admission), and what
// its tenant's plan tells shards (kept by limits); proxy and admin act
// on it. Pure data: it imports tenancy only.
package admitted
