// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// A misbehaving token for the tests, its storage laid out as TestUSDT's so that its code can take
/// the place of TestUSDT's on a test chain, balances kept. `quirk` (slot 5): 0 behaves; 1 returns
/// false from `transfer` and moves nothing; 2 takes 1% of each transfer to FEE_COLLECTOR.
contract QuirkyToken is ERC20 {
    address public constant FEE_COLLECTOR = address(0xFEE);
    uint8 public quirk;

    constructor() ERC20("Quirky Tether USD", "USDT") {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function transfer(address to, uint256 value) public override returns (bool) {
        if (quirk == 1) return false;
        if (quirk == 2) {
            uint256 fee = value / 100;
            _transfer(msg.sender, FEE_COLLECTOR, fee);
            _transfer(msg.sender, to, value - fee);
            return true;
        }
        return super.transfer(to, value);
    }
}
