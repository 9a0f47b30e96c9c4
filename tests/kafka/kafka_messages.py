"""kafka_messages.py — the requests and responses kaas serves, as Apache
Kafka 3.9 defines them (field names and versions from its message JSON
files; see kafka_schema.py).  KEY: name -> (api key, first flexible
version, request fields, response fields)."""
from kafka_schema import F

S, NS = "string", "bytes"
NO_FLEX = 999  # an API without flexible versions

API = {}


def api(name, key, flex, req, resp):
    API[name] = (key, flex, req, resp)


api("ApiVersions", 18, 3,
    [F("ClientSoftwareName", S, "3+"), F("ClientSoftwareVersion", S, "3+")],
    [F("ErrorCode", "int16"),
     F("ApiKeys", "[]", fields=[F("ApiKey", "int16"), F("MinVersion", "int16"),
                                F("MaxVersion", "int16")]),
     F("ThrottleTimeMs", "int32", "1+")])

api("Metadata", 3, 9,
    [F("Topics", "[]", nullable="1+", fields=[F("TopicId", "uuid", "10+"),
                                              F("Name", S, nullable="12+")]),
     F("AllowAutoTopicCreation", "bool", "4+"),
     F("IncludeClusterAuthorizedOperations", "bool", "8-10"),
     F("IncludeTopicAuthorizedOperations", "bool", "8+")],
    [F("ThrottleTimeMs", "int32", "3+"),
     F("Brokers", "[]", fields=[F("NodeId", "int32"), F("Host", S), F("Port", "int32"),
                                F("Rack", S, "1+", nullable="1+")]),
     F("ClusterId", S, "2+", nullable="2+"),
     F("ControllerId", "int32", "1+"),
     F("Topics", "[]", fields=[
         F("ErrorCode", "int16"), F("Name", S, nullable="12+"), F("TopicId", "uuid", "10+"),
         F("IsInternal", "bool", "1+"),
         F("Partitions", "[]", fields=[
             F("ErrorCode", "int16"), F("PartitionIndex", "int32"), F("LeaderId", "int32"),
             F("LeaderEpoch", "int32", "7+"), F("ReplicaNodes", "[]int32"),
             F("IsrNodes", "[]int32"), F("OfflineReplicas", "[]int32", "5+")]),
         F("TopicAuthorizedOperations", "int32", "8+")]),
     F("ClusterAuthorizedOperations", "int32", "8-10")])

api("Produce", 0, 9,
    [F("TransactionalId", S, "3+", nullable="3+"), F("Acks", "int16"), F("TimeoutMs", "int32"),
     F("TopicData", "[]", fields=[F("Name", S), F("PartitionData", "[]", fields=[
         F("Index", "int32"), F("Records", "records")])])],
    [F("Responses", "[]", fields=[F("Name", S), F("PartitionResponses", "[]", fields=[
        F("Index", "int32"), F("ErrorCode", "int16"), F("BaseOffset", "int64"),
        F("LogAppendTimeMs", "int64", "2+"), F("LogStartOffset", "int64", "5+"),
        F("RecordErrors", "[]", "8+", fields=[F("BatchIndex", "int32"),
                                             F("BatchIndexErrorMessage", S, nullable="8+")]),
        F("ErrorMessage", S, "8+", nullable="8+")])]),
     F("ThrottleTimeMs", "int32", "1+")])

api("Fetch", 1, 12,
    [F("ReplicaId", "int32", "0-14"), F("MaxWaitMs", "int32"), F("MinBytes", "int32"),
     F("MaxBytes", "int32", "3+"), F("IsolationLevel", "int8", "4+"),
     F("SessionId", "int32", "7+"), F("SessionEpoch", "int32", "7+"),
     F("Topics", "[]", fields=[F("Topic", S, "0-12"), F("TopicId", "uuid", "13+"),
                               F("Partitions", "[]", fields=[
                                   F("Partition", "int32"),
                                   F("CurrentLeaderEpoch", "int32", "9+"),
                                   F("FetchOffset", "int64"),
                                   F("LastFetchedEpoch", "int32", "12+"),
                                   F("LogStartOffset", "int64", "5+"),
                                   F("PartitionMaxBytes", "int32")])]),
     F("ForgottenTopicsData", "[]", "7+", fields=[F("Topic", S, "7-12"),
                                                 F("TopicId", "uuid", "13+"),
                                                 F("Partitions", "[]int32")]),
     F("RackId", S, "11+")],
    [F("ThrottleTimeMs", "int32", "1+"), F("ErrorCode", "int16", "7+"),
     F("SessionId", "int32", "7+"),
     F("Responses", "[]", fields=[F("Topic", S, "0-12"), F("TopicId", "uuid", "13+"),
                                  F("Partitions", "[]", fields=[
                                      F("PartitionIndex", "int32"), F("ErrorCode", "int16"),
                                      F("HighWatermark", "int64"),
                                      F("LastStableOffset", "int64", "4+"),
                                      F("LogStartOffset", "int64", "5+"),
                                      F("AbortedTransactions", "[]", "4+", nullable="4+",
                                        fields=[F("ProducerId", "int64"),
                                                F("FirstOffset", "int64")]),
                                      F("PreferredReadReplica", "int32", "11+"),
                                      F("Records", "records")])])])

api("ListOffsets", 2, 6,
    [F("ReplicaId", "int32"), F("IsolationLevel", "int8", "2+"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("CurrentLeaderEpoch", "int32", "4+"),
         F("Timestamp", "int64"), F("MaxNumOffsets", "int32", "0")])])],
    [F("ThrottleTimeMs", "int32", "2+"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("ErrorCode", "int16"),
         F("OldStyleOffsets", "[]int64", "0"), F("Timestamp", "int64", "1+"),
         F("Offset", "int64", "1+"), F("LeaderEpoch", "int32", "4+")])])])

api("FindCoordinator", 10, 3,
    [F("Key", S, "0-3"), F("KeyType", "int8", "1+"), F("CoordinatorKeys", "[]string", "4+")],
    [F("ThrottleTimeMs", "int32", "1+"), F("ErrorCode", "int16", "0-3"),
     F("ErrorMessage", S, "1-3", nullable="1-3"), F("NodeId", "int32", "0-3"),
     F("Host", S, "0-3"), F("Port", "int32", "0-3"),
     F("Coordinators", "[]", "4+", fields=[F("Key", S), F("NodeId", "int32"), F("Host", S),
                                          F("Port", "int32"), F("ErrorCode", "int16"),
                                          F("ErrorMessage", S, nullable="4+")])])

api("JoinGroup", 11, 6,
    [F("GroupId", S), F("SessionTimeoutMs", "int32"), F("RebalanceTimeoutMs", "int32", "1+"),
     F("MemberId", S), F("GroupInstanceId", S, "5+", nullable="5+"), F("ProtocolType", S),
     F("Protocols", "[]", fields=[F("Name", S), F("Metadata", NS)]),
     F("Reason", S, "8+", nullable="8+")],
    [F("ThrottleTimeMs", "int32", "2+"), F("ErrorCode", "int16"), F("GenerationId", "int32"),
     F("ProtocolType", S, "7+", nullable="7+"), F("ProtocolName", S, nullable="7+"),
     F("Leader", S), F("SkipAssignment", "bool", "9+"), F("MemberId", S),
     F("Members", "[]", fields=[F("MemberId", S), F("GroupInstanceId", S, "5+", nullable="5+"),
                                F("Metadata", NS)])])

api("SyncGroup", 14, 4,
    [F("GroupId", S), F("GenerationId", "int32"), F("MemberId", S),
     F("GroupInstanceId", S, "3+", nullable="3+"), F("ProtocolType", S, "5+", nullable="5+"),
     F("ProtocolName", S, "5+", nullable="5+"),
     F("Assignments", "[]", fields=[F("MemberId", S), F("Assignment", NS)])],
    [F("ThrottleTimeMs", "int32", "1+"), F("ErrorCode", "int16"),
     F("ProtocolType", S, "5+", nullable="5+"), F("ProtocolName", S, "5+", nullable="5+"),
     F("Assignment", NS)])

api("Heartbeat", 12, 4,
    [F("GroupId", S), F("GenerationId", "int32"), F("MemberId", S),
     F("GroupInstanceId", S, "3+", nullable="3+")],
    [F("ThrottleTimeMs", "int32", "1+"), F("ErrorCode", "int16")])

api("LeaveGroup", 13, 4,
    [F("GroupId", S), F("MemberId", S, "0-2"),
     F("Members", "[]", "3+", fields=[F("MemberId", S),
                                     F("GroupInstanceId", S, nullable="3+"),
                                     F("Reason", S, "5+", nullable="5+")])],
    [F("ThrottleTimeMs", "int32", "1+"), F("ErrorCode", "int16"),
     F("Members", "[]", "3+", fields=[F("MemberId", S), F("GroupInstanceId", S, nullable="3+"),
                                     F("ErrorCode", "int16")])])

api("OffsetCommit", 8, 8,
    [F("GroupId", S), F("GenerationId", "int32", "1+"), F("MemberId", S, "1+"),
     F("GroupInstanceId", S, "7+", nullable="7+"), F("RetentionTimeMs", "int64", "2-4"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("CommittedOffset", "int64"),
         F("CommittedLeaderEpoch", "int32", "6+"), F("CommitTimestamp", "int64", "1"),
         F("CommittedMetadata", S, nullable="0+")])])],
    [F("ThrottleTimeMs", "int32", "3+"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("ErrorCode", "int16")])])])

api("OffsetFetch", 9, 6,
    [F("GroupId", S, "0-7"), F("Topics", "[]", "0-7", nullable="2-7", fields=[
        F("Name", S), F("PartitionIndexes", "[]int32")]),
     F("Groups", "[]", "8+", fields=[
         F("GroupId", S), F("Topics", "[]", nullable="8+", fields=[
             F("Name", S), F("PartitionIndexes", "[]int32")])]),
     F("RequireStable", "bool", "7+")],
    [F("ThrottleTimeMs", "int32", "3+"),
     F("Topics", "[]", "0-7", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("CommittedOffset", "int64"),
         F("CommittedLeaderEpoch", "int32", "5+"), F("Metadata", S, nullable="0+"),
         F("ErrorCode", "int16")])]),
     F("ErrorCode", "int16", "2-7"),
     F("Groups", "[]", "8+", fields=[
         F("GroupId", S),
         F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
             F("PartitionIndex", "int32"), F("CommittedOffset", "int64"),
             F("CommittedLeaderEpoch", "int32"), F("Metadata", S, nullable="8+"),
             F("ErrorCode", "int16")])]),
         F("ErrorCode", "int16")])])

api("DescribeGroups", 15, 5,
    [F("Groups", "[]string"), F("IncludeAuthorizedOperations", "bool", "3+")],
    [F("ThrottleTimeMs", "int32", "1+"),
     F("Groups", "[]", fields=[
         F("ErrorCode", "int16"), F("GroupId", S), F("GroupState", S), F("ProtocolType", S),
         F("ProtocolData", S),
         F("Members", "[]", fields=[F("MemberId", S), F("GroupInstanceId", S, "4+", nullable="4+"),
                                    F("ClientId", S), F("ClientHost", S),
                                    F("MemberMetadata", NS), F("MemberAssignment", NS)]),
         F("AuthorizedOperations", "int32", "3+")])])

api("ListGroups", 16, 3,
    [F("StatesFilter", "[]string", "4+"), F("TypesFilter", "[]string", "5+")],
    [F("ThrottleTimeMs", "int32", "1+"), F("ErrorCode", "int16"),
     F("Groups", "[]", fields=[F("GroupId", S), F("ProtocolType", S),
                               F("GroupState", S, "4+"), F("GroupType", S, "5+")])])

api("CreateTopics", 19, 5,
    [F("Topics", "[]", fields=[
        F("Name", S), F("NumPartitions", "int32"), F("ReplicationFactor", "int16"),
        F("Assignments", "[]", fields=[F("PartitionIndex", "int32"), F("BrokerIds", "[]int32")]),
        F("Configs", "[]", fields=[F("Name", S), F("Value", S, nullable="0+")])]),
     F("TimeoutMs", "int32"), F("ValidateOnly", "bool", "1+")],
    [F("ThrottleTimeMs", "int32", "2+"),
     F("Topics", "[]", fields=[
         F("Name", S), F("TopicId", "uuid", "7+"), F("ErrorCode", "int16"),
         F("ErrorMessage", S, "1+", nullable="0+"), F("NumPartitions", "int32", "5+"),
         F("ReplicationFactor", "int16", "5+"),
         F("Configs", "[]", "5+", nullable="5+", fields=[
             F("Name", S), F("Value", S, nullable="5+"), F("ReadOnly", "bool"),
             F("ConfigSource", "int8"), F("IsSensitive", "bool")])])])

api("DeleteTopics", 20, 4,
    [F("TopicNames", "[]string", "0-5"), F("TimeoutMs", "int32")],
    [F("ThrottleTimeMs", "int32", "1+"),
     F("Responses", "[]", fields=[F("Name", S, nullable="6+"), F("TopicId", "uuid", "6+"),
                                  F("ErrorCode", "int16"),
                                  F("ErrorMessage", S, "5+", nullable="5+")])])

api("InitProducerId", 22, 2,
    [F("TransactionalId", S, nullable="0+"), F("TransactionTimeoutMs", "int32"),
     F("ProducerId", "int64", "3+"), F("ProducerEpoch", "int16", "3+")],
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16"), F("ProducerId", "int64"),
     F("ProducerEpoch", "int16")])

api("DescribeConfigs", 32, 4,
    [F("Resources", "[]", fields=[F("ResourceType", "int8"), F("ResourceName", S),
                                  F("ConfigurationKeys", "[]string", nullable="0+")]),
     F("IncludeSynonyms", "bool", "1+"), F("IncludeDocumentation", "bool", "3+")],
    [F("ThrottleTimeMs", "int32"),
     F("Results", "[]", fields=[
         F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
         F("ResourceType", "int8"), F("ResourceName", S),
         F("Configs", "[]", fields=[
             F("Name", S), F("Value", S, nullable="0+"), F("ReadOnly", "bool"),
             F("IsDefault", "bool", "0"), F("ConfigSource", "int8", "1+"),
             F("IsSensitive", "bool"),
             F("Synonyms", "[]", "1+", fields=[F("Name", S), F("Value", S, nullable="0+"),
                                              F("Source", "int8")]),
             F("ConfigType", "int8", "3+"), F("Documentation", S, "3+", nullable="0+")])])])

api("AlterConfigs", 33, 2,
    [F("Resources", "[]", fields=[F("ResourceType", "int8"), F("ResourceName", S),
                                  F("Configs", "[]", fields=[F("Name", S),
                                                             F("Value", S, nullable="0+")])]),
     F("ValidateOnly", "bool")],
    [F("ThrottleTimeMs", "int32"),
     F("Responses", "[]", fields=[F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
                                  F("ResourceType", "int8"), F("ResourceName", S)])])

api("IncrementalAlterConfigs", 44, 1,
    [F("Resources", "[]", fields=[F("ResourceType", "int8"), F("ResourceName", S),
                                  F("Configs", "[]", fields=[F("Name", S),
                                                             F("ConfigOperation", "int8"),
                                                             F("Value", S, nullable="0+")])]),
     F("ValidateOnly", "bool")],
    [F("ThrottleTimeMs", "int32"),
     F("Responses", "[]", fields=[F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
                                  F("ResourceType", "int8"), F("ResourceName", S)])])

api("DeleteGroups", 42, 2,
    [F("GroupsNames", "[]string")],
    [F("ThrottleTimeMs", "int32"),
     F("Results", "[]", fields=[F("GroupId", S), F("ErrorCode", "int16")])])

# OffsetDelete has no flexible version (NO_FLEX).
api("OffsetDelete", 47, NO_FLEX,
    [F("GroupId", S), F("Topics", "[]", fields=[F("Name", S),
                                                 F("Partitions", "[]", fields=[
                                                     F("PartitionIndex", "int32")])])],
    [F("ErrorCode", "int16"), F("ThrottleTimeMs", "int32"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("ErrorCode", "int16")])])])

api("CreatePartitions", 37, 2,
    [F("Topics", "[]", fields=[F("Name", S), F("Count", "int32"),
                               F("Assignments", "[]", nullable="0+",
                                 fields=[F("BrokerIds", "[]int32")])]),
     F("TimeoutMs", "int32"), F("ValidateOnly", "bool")],
    [F("ThrottleTimeMs", "int32"),
     F("Results", "[]", fields=[F("Name", S), F("ErrorCode", "int16"),
                                F("ErrorMessage", S, nullable="0+")])])

# ---------------------------------------------------------------- issue 15: admin APIs
api("DescribeCluster", 60, 0,
    [F("IncludeClusterAuthorizedOperations", "bool"), F("EndpointType", "int8", "1+")],
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
     F("EndpointType", "int8", "1+"), F("ClusterId", S), F("ControllerId", "int32"),
     F("Brokers", "[]", fields=[F("BrokerId", "int32"), F("Host", S), F("Port", "int32"),
                                F("Rack", S, nullable="0+")]),
     F("ClusterAuthorizedOperations", "int32")])

api("DeleteRecords", 21, 2,
    [F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
        F("PartitionIndex", "int32"), F("Offset", "int64")])]),
     F("TimeoutMs", "int32")],
    [F("ThrottleTimeMs", "int32"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("LowWatermark", "int64"), F("ErrorCode", "int16")])])])

api("OffsetForLeaderEpoch", 23, 4,
    [F("ReplicaId", "int32", "3+"),
     F("Topics", "[]", fields=[F("Topic", S), F("Partitions", "[]", fields=[
         F("Partition", "int32"), F("CurrentLeaderEpoch", "int32", "2+"),
         F("LeaderEpoch", "int32")])])],
    [F("ThrottleTimeMs", "int32", "2+"),
     F("Topics", "[]", fields=[F("Topic", S), F("Partitions", "[]", fields=[
         F("ErrorCode", "int16"), F("Partition", "int32"), F("LeaderEpoch", "int32", "1+"),
         F("EndOffset", "int64")])])])

api("DescribeLogDirs", 35, 2,
    [F("Topics", "[]", nullable="0+", fields=[F("Topic", S), F("Partitions", "[]int32")])],
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16", "3+"),
     F("Results", "[]", fields=[
         F("ErrorCode", "int16"), F("LogDir", S),
         F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
             F("PartitionIndex", "int32"), F("PartitionSize", "int64"),
             F("OffsetLag", "int64"), F("IsFutureKey", "bool")])]),
         F("TotalBytes", "int64", "4+"), F("UsableBytes", "int64", "4+")])])

api("DescribeProducers", 61, 0,
    [F("Topics", "[]", fields=[F("Name", S), F("PartitionIndexes", "[]int32")])],
    [F("ThrottleTimeMs", "int32"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("ErrorCode", "int16"),
         F("ErrorMessage", S, nullable="0+"),
         F("ActiveProducers", "[]", fields=[
             F("ProducerId", "int64"), F("ProducerEpoch", "int32"), F("LastSequence", "int32"),
             F("LastTimestamp", "int64"), F("CoordinatorEpoch", "int32"),
             F("CurrentTxnStartOffset", "int64")])])])])

_CURSOR = [F("TopicName", S), F("PartitionIndex", "int32")]
api("DescribeTopicPartitions", 75, 0,
    [F("Topics", "[]", fields=[F("Name", S)]), F("ResponsePartitionLimit", "int32"),
     F("Cursor", "struct", nullable="0+", fields=_CURSOR)],
    [F("ThrottleTimeMs", "int32"),
     F("Topics", "[]", fields=[
         F("ErrorCode", "int16"), F("Name", S, nullable="0+"), F("TopicId", "uuid"),
         F("IsInternal", "bool"),
         F("Partitions", "[]", fields=[
             F("ErrorCode", "int16"), F("PartitionIndex", "int32"), F("LeaderId", "int32"),
             F("LeaderEpoch", "int32"), F("ReplicaNodes", "[]int32"), F("IsrNodes", "[]int32"),
             F("EligibleLeaderReplicas", "[]int32", nullable="0+"),
             F("LastKnownElr", "[]int32", nullable="0+"), F("OfflineReplicas", "[]int32")]),
         F("TopicAuthorizedOperations", "int32")]),
     F("NextCursor", "struct", nullable="0+", fields=_CURSOR)])
api("SaslHandshake", 17, NO_FLEX,
    [F("Mechanism", S)],
    [F("ErrorCode", "int16"), F("Mechanisms", "[]string")])

api("SaslAuthenticate", 36, 2,
    [F("AuthBytes", NS)],
    [F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"), F("AuthBytes", NS),
     F("SessionLifetimeMs", "int64", "1+")])

api("DescribeUserScramCredentials", 50, 0,
    [F("Users", "[]", nullable="0+", fields=[F("Name", S)])],
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16"),
     F("ErrorMessage", S, nullable="0+"),
     F("Results", "[]", fields=[
         F("User", S), F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
         F("CredentialInfos", "[]", fields=[F("Mechanism", "int8"),
                                            F("Iterations", "int32")])])])

api("AlterUserScramCredentials", 51, 0,
    [F("Deletions", "[]", fields=[F("Name", S), F("Mechanism", "int8")]),
     F("Upsertions", "[]", fields=[F("Name", S), F("Mechanism", "int8"),
                                   F("Iterations", "int32"), F("Salt", NS),
                                   F("SaltedPassword", NS)])],
    [F("ThrottleTimeMs", "int32"),
     F("Results", "[]", fields=[F("User", S), F("ErrorCode", "int16"),
                                F("ErrorMessage", S, nullable="0+")])])
# The ACL APIs (issue 17): v1+ carry the pattern type.
_ACL_FILTER = [F("ResourceTypeFilter", "int8"), F("ResourceNameFilter", S, nullable="0+"),
               F("PatternTypeFilter", "int8", "1+"), F("PrincipalFilter", S, nullable="0+"),
               F("HostFilter", S, nullable="0+"), F("Operation", "int8"),
               F("PermissionType", "int8")]

api("DescribeAcls", 29, 2, _ACL_FILTER,
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
     F("Resources", "[]", fields=[F("ResourceType", "int8"), F("ResourceName", S),
                                  F("PatternType", "int8", "1+"),
                                  F("Acls", "[]", fields=[F("Principal", S), F("Host", S),
                                                          F("Operation", "int8"),
                                                          F("PermissionType", "int8")])])])

api("CreateAcls", 30, 2,
    [F("Creations", "[]", fields=[F("ResourceType", "int8"), F("ResourceName", S),
                                  F("ResourcePatternType", "int8", "1+"), F("Principal", S),
                                  F("Host", S), F("Operation", "int8"),
                                  F("PermissionType", "int8")])],
    [F("ThrottleTimeMs", "int32"),
     F("Results", "[]", fields=[F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+")])])

api("DeleteAcls", 31, 2,
    [F("Filters", "[]", fields=_ACL_FILTER)],
    [F("ThrottleTimeMs", "int32"),
     F("FilterResults", "[]", fields=[
         F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
         F("MatchingAcls", "[]", fields=[
             F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
             F("ResourceType", "int8"), F("ResourceName", S), F("PatternType", "int8", "1+"),
             F("Principal", S), F("Host", S), F("Operation", "int8"),
             F("PermissionType", "int8")])])])
# Transactions (txn-coord, issue 16).
api("AddPartitionsToTxn", 24, 3,
    [F("TransactionalId", S), F("ProducerId", "int64"), F("ProducerEpoch", "int16"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]int32")])],
    [F("ThrottleTimeMs", "int32"),
     F("Results", "[]", fields=[F("Name", S), F("Results", "[]", fields=[
         F("PartitionIndex", "int32"), F("PartitionErrorCode", "int16")])])])

api("AddOffsetsToTxn", 25, 3,
    [F("TransactionalId", S), F("ProducerId", "int64"), F("ProducerEpoch", "int16"),
     F("GroupId", S)],
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16")])

api("EndTxn", 26, 3,
    [F("TransactionalId", S), F("ProducerId", "int64"), F("ProducerEpoch", "int16"),
     F("Committed", "bool")],
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16")])

api("TxnOffsetCommit", 28, 3,
    [F("TransactionalId", S), F("GroupId", S), F("ProducerId", "int64"),
     F("ProducerEpoch", "int16"), F("GenerationId", "int32", "3+"), F("MemberId", S, "3+"),
     F("GroupInstanceId", S, "3+", nullable="3+"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("CommittedOffset", "int64"),
         F("CommittedLeaderEpoch", "int32", "2+"),
         F("CommittedMetadata", S, nullable="0+")])])],
    [F("ThrottleTimeMs", "int32"),
     F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
         F("PartitionIndex", "int32"), F("ErrorCode", "int16")])])])

api("DescribeTransactions", 65, 0,
    [F("TransactionalIds", "[]string")],
    [F("ThrottleTimeMs", "int32"),
     F("TransactionStates", "[]", fields=[
         F("ErrorCode", "int16"), F("TransactionalId", S), F("TransactionState", S),
         F("TransactionTimeoutMs", "int32"), F("TransactionStartTimeMs", "int64"),
         F("ProducerId", "int64"), F("ProducerEpoch", "int16"),
         F("Topics", "[]", fields=[F("Topic", S), F("Partitions", "[]int32")])])])

api("DescribeClientQuotas", 48, 1,
    [F("Components", "[]", fields=[F("EntityType", S), F("MatchType", "int8"),
                                   F("Match", S, nullable="0+")]),
     F("Strict", "bool")],
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
     F("Entries", "[]", nullable="0+", fields=[
         F("Entity", "[]", fields=[F("EntityType", S), F("EntityName", S, nullable="0+")]),
         F("Values", "[]", fields=[F("Key", S), F("Value", "float64")])])])

api("AlterClientQuotas", 49, 1,
    [F("Entries", "[]", fields=[
        F("Entity", "[]", fields=[F("EntityType", S), F("EntityName", S, nullable="0+")]),
        F("Ops", "[]", fields=[F("Key", S), F("Value", "float64"), F("Remove", "bool")])]),
     F("ValidateOnly", "bool")],
    [F("ThrottleTimeMs", "int32"),
     F("Entries", "[]", fields=[
         F("ErrorCode", "int16"), F("ErrorMessage", S, nullable="0+"),
         F("Entity", "[]", fields=[F("EntityType", S), F("EntityName", S, nullable="0+")])])])

api("ListTransactions", 66, 0,
    [F("StateFilters", "[]string"), F("ProducerIdFilters", "[]int64")],
    [F("ThrottleTimeMs", "int32"), F("ErrorCode", "int16"),
     F("UnknownStateFilters", "[]string"),
     F("TransactionStates", "[]", fields=[F("TransactionalId", S), F("ProducerId", "int64"),
                                          F("TransactionState", S)])])

api("WriteTxnMarkers", 27, 1,
    [F("Markers", "[]", fields=[
        F("ProducerId", "int64"), F("ProducerEpoch", "int16"), F("TransactionResult", "bool"),
        F("Topics", "[]", fields=[F("Name", S), F("PartitionIndexes", "[]int32")]),
        F("CoordinatorEpoch", "int32")])],
    [F("Markers", "[]", fields=[
        F("ProducerId", "int64"),
        F("Topics", "[]", fields=[F("Name", S), F("Partitions", "[]", fields=[
            F("PartitionIndex", "int32"), F("ErrorCode", "int16")])])])])
