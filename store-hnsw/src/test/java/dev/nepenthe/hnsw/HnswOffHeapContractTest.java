package dev.nepenthe.hnsw;

import java.util.HashMap;
import java.util.Map;

/** HNSW with its vectors off the heap keeps the index contract as the heap graph does. */
class HnswOffHeapContractTest extends HnswIndexContractTest {

    @Override
    protected Map<String, String> params() {
        Map<String, String> params = new HashMap<>(super.params());
        params.put(HnswParams.VECTORS, "offheap");
        return Map.copyOf(params);
    }
}
