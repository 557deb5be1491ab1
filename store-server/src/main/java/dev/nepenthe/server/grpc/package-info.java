/**
 * The gRPC server in front of one store: its services, bearer-token authentication and roles,
 * limits and budgets per call, translation between wire messages and the store's types, and how the
 * store's exceptions become statuses. May use store-core's API, store-cache, store-embed and the
 * generated dev.nepenthe.grpc.v1 stubs; nothing internal.
 */
package dev.nepenthe.server.grpc;
