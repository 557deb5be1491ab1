/**
 * Offline audit of the evidence ledger and the receipts: an auditor needs only the ledger file, the
 * store's public key and these classes ({@link dev.nepenthe.core.audit.LedgerVerifier} runs from
 * the command line). API; may use dev.nepenthe.core and, for the formats, internal.evidence; never
 * the engines.
 */
package dev.nepenthe.core.audit;
