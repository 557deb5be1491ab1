package dev.nepenthe.hnsw;

import java.util.HashMap;
import java.util.Map;

/**
 * HNSW whose searches walk int8 codes keeps the index contract as the float graph does: the codes
 * only choose the candidates, which are re-scored from the floats (the default re-rank of twice k),
 * so results stay well formed, scores survive save and load to the bit, and removed ordinals never
 * come back through a stale code.
 */
class HnswInt8ContractTest extends HnswIndexContractTest {

    @Override
    protected Map<String, String> params() {
        Map<String, String> params = new HashMap<>(super.params());
        params.put(HnswParams.QUANTIZATION, HnswParams.Quantization.INT8.paramValue());
        return Map.copyOf(params);
    }
}
