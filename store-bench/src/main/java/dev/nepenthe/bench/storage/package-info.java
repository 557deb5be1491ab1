/**
 * What the storage layer costs: durable ingest, opening a store as it grows, filtered searches and
 * reading stored text. May use store-core's internals (storage, crypto) to time them directly, and
 * the seeded fixtures.
 */
package dev.nepenthe.bench.storage;
