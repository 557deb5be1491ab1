package dev.nepenthe.hnsw;

import dev.nepenthe.core.testing.VectorIndexContract;
import java.util.Map;

/** HNSW with its vectors off the heap keeps the index contract as the heap graph does. */
class HnswOffHeapContractTest extends VectorIndexContract {

    @Override
    protected String kind() {
        return "hnsw";
    }

    @Override
    protected Map<String, String> params() {
        return Map.of(HnswParams.M, "8", HnswParams.EF_CONSTRUCTION, "64", HnswParams.EF_SEARCH, "64",
                HnswParams.VECTORS, "offheap");
    }

    @Override
    protected double minRecall() {
        return 0.95;
    }
}
