/**
 * Helpers of Nepenthe's framework adapters that are no part of their API: batch embedding checked
 * for its count ({@link dev.nepenthe.adapter.internal.EmbedderBatches}). Uses store-core's public
 * API only. Internal: it may change at any commit, and is for the adapters, not for users.
 */
package dev.nepenthe.adapter.internal;
