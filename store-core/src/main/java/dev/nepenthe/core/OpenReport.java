package dev.nepenthe.core;

import java.nio.file.Path;

/**
 * What a collection's storage found and decided when it opened: the records it loaded, those it
 * dropped (deleted or forgotten meanwhile, or superseded by a newer version), what the
 * write-ahead log replay cut, orphan files removed and whether the id map was rebuilt. Every
 * decision is also logged, by keyed hash, never by id or content.
 *
 * @param liveRecords         records loaded
 * @param droppedAsDeleted    stored records left out because a journaled delete or forget names them
 * @param droppedAsSuperseded stored records left out because a newer version exists
 * @param removedByLogDeletes records removed by delete entries replayed from the log
 * @param log                 what the write-ahead log replay found
 * @param orphanFilesRemoved  files no manifest names, removed
 * @param idMapRebuilt        whether the id map file was rebuilt from the records
 * @param idMapRepairs        id map entries repaired
 */
public record OpenReport(int liveRecords, int droppedAsDeleted, int droppedAsSuperseded, int removedByLogDeletes,
        LogRecovery log, int orphanFilesRemoved, boolean idMapRebuilt, int idMapRepairs) {

    /**
     * The write-ahead log replay.
     *
     * @param generations      log files replayed
     * @param entries          entries replayed
     * @param tornBytesDropped bytes of a torn tail (a write the crash interrupted, never acknowledged) cut off
     * @param tornFile         the file whose tail was cut, or null
     */
    public record LogRecovery(int generations, long entries, long tornBytesDropped, Path tornFile) {}
}
