package dev.nepenthe.core;

import java.nio.file.Path;

/**
 * What a collection's storage found and decided when it opened: the records it loaded, those it
 * dropped (deleted or forgotten meanwhile, or superseded by a newer version), what the
 * write-ahead log replay cut, orphan files removed and whether the id map was rebuilt. Every
 * decision is also logged, by keyed hash, never by id or content.
 *
 * @param liveRecords         records loaded
 * @param droppedAsDeleted    stored copies the tombstone journal names as deleted (a restored
 *                            snapshot, or a crash between a deletion's journal entry and its checkpoint)
 * @param droppedAsSuperseded stored copies of a record at an ordinal a newer version holds (a
 *                            sound store never leaves one; each is logged as a warning)
 * @param removedByLogDeletes records the write-ahead log's delete entries removed
 * @param log                 what the write-ahead log replay found
 * @param orphanFilesRemoved  files no manifest names (a checkpoint cut short), removed
 * @param idMapRebuilt        whether the id map was rebuilt from the records (it was not closed cleanly)
 * @param idMapRepairs        id map entries added, changed or removed to agree with the records
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
