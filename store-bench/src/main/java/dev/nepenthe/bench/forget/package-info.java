/**
 * What forgetting costs: forget latency and volume in a loaded store, and removal in place against
 * a rebuild for the vector indexes and the text index (JMH). May use store-core (its internals too:
 * a benchmark times their parts), the index modules and the seeded fixtures.
 */
package dev.nepenthe.bench.forget;
