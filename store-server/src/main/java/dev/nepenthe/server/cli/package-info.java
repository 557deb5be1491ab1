/**
 * The subcommands of {@code nepenthe}: serve, the client commands that talk gRPC to a server
 * (ingest, search, forget, status, snapshot, restore, readmit), tokens, and the offline verifiers
 * of a ledger and a receipt. May use the grpc package and its generated stubs, store-core's API
 * (and internal.evidence for the verifiers), store-embed and Gson.
 */
package dev.nepenthe.server.cli;
