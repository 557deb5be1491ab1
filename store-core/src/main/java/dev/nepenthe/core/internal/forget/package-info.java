/**
 * Internal, not API: the forget protocol (mark, cleanup, verify, seal; DESIGN.md, "The forget
 * protocol"), its phases and batch queue, the durable operation log, write fences, legal holds,
 * re-admissions, reconciliation at open and the anchored ledger. The top of the internal stack: may
 * use every other internal package, and nothing below it uses it; its parts never reach back into
 * {@code ForgetProtocol}, nor any of it into the facades.
 */
package dev.nepenthe.core.internal.forget;
