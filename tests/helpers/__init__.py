"""What several test folders share: fakes, stand-ins, servers and the fixtures' folder (`paths`)."""
